/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The four STREAM kernels, one implementation per instruction set, with and
 * without streaming (non-temporal) stores. The binary is built for the
 * baseline of its architecture; wider kernels are compiled with target
 * attributes and chosen at run time after a CPU check. */
#ifndef ST_KERNELS_H
#define ST_KERNELS_H

#include <stdbool.h>
#include <stddef.h>

/* In the order STREAM runs them in each repetition. */
enum st_kernel { ST_COPY, ST_SCALE, ST_ADD, ST_TRIAD, ST_NKERNELS };

enum st_isa {
	ST_ISA_AUTO = -1,
	ST_ISA_GENERIC,		/* plain C, no streaming stores */
	ST_ISA_SSE2,		/* x86-64 baseline, _mm_stream_pd */
	ST_ISA_AVX,		/* 256-bit, _mm256_stream_pd (any AVX CPU) */
	ST_ISA_AVX512,		/* 512-bit, _mm512_stream_pd (AVX-512F) */
	ST_NISA
};

/* Each kernel works on elements [lo, hi) of the three arrays:
 *   copy  c = a          scale b = s*c
 *   add   c = a + b      triad a = b + s*c
 * Streaming-store variants end with a store fence. */
typedef void (*st_kernel_fn)(double *restrict a, double *restrict b,
			     double *restrict c, double s, size_t lo, size_t hi);

const char *st_kernel_name(enum st_kernel k);

/* Bytes STREAM counts per element: 16 for copy and scale, 24 for add and triad. */
unsigned st_kernel_bytes(enum st_kernel k);

const char *st_isa_name(enum st_isa isa);

/* Returns the isa named s, or ST_NISA; "auto" gives ST_ISA_AUTO. */
enum st_isa st_isa_parse(const char *s);

/* Whether this CPU (and this build) can run the kernels of isa. */
bool st_isa_supported(enum st_isa isa);

/* The widest supported isa. */
enum st_isa st_isa_best(void);

/* The default: the widest isa, except where a narrower one is known to
 * stream faster on this CPU. */
enum st_isa st_isa_auto(void);

/* Whether isa has streaming-store kernels. */
bool st_isa_has_streaming(enum st_isa isa);

/* The kernel k of isa, with streaming stores when streaming is set and the
 * isa has them. */
st_kernel_fn st_kernel_get(enum st_isa isa, bool streaming, enum st_kernel k);

#endif
