// SPDX-License-Identifier: GPL-2.0-or-later
/* STREAM kernels. The file is compiled for the architecture's baseline; the
 * AVX and AVX-512 variants carry target attributes and are only called after
 * __builtin_cpu_supports says the CPU (and the kernel's saved state) has
 * them, so one binary runs on every x86-64 CPU.
 *
 * gcc never emits non-temporal stores for a plain C loop, so the streaming
 * variants use the _mm*_stream_pd intrinsics. Multiplication and addition
 * stay separate operations (no FMA) and the file is built with
 * -ffp-contract=off: every variant then computes bit for bit what the
 * validation's scalar recurrence computes. */
#include "config.h"
#include "kernels.h"

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#define ST_X86 1
#include <immintrin.h>
#else
#define ST_X86 0
#endif

static const char *const kernel_names[ST_NKERNELS] = { "copy", "scale", "add", "triad" };
static const unsigned kernel_bytes[ST_NKERNELS] = { 16, 16, 24, 24 };
static const char *const isa_names[ST_NISA] = { "generic", "sse2", "avx", "avx512" };

const char *st_kernel_name(enum st_kernel k)
{
	return kernel_names[k];
}

unsigned st_kernel_bytes(enum st_kernel k)
{
	return kernel_bytes[k];
}

const char *st_isa_name(enum st_isa isa)
{
	return isa == ST_ISA_AUTO ? "auto" : isa_names[isa];
}

enum st_isa st_isa_parse(const char *s)
{
	if (!strcmp(s, "auto"))
		return ST_ISA_AUTO;
	for (int i = 0; i < ST_NISA; i++)
		if (!strcmp(s, isa_names[i]))
			return (enum st_isa)i;
	return ST_NISA;
}

/* ---- plain C: every architecture ---------------------------------------- */

static void copy_generic(double *restrict a, double *restrict b, double *restrict c,
			 double s, size_t lo, size_t hi)
{
	(void)b;
	(void)s;
#pragma omp simd
	for (size_t i = lo; i < hi; i++)
		c[i] = a[i];
}

static void scale_generic(double *restrict a, double *restrict b, double *restrict c,
			  double s, size_t lo, size_t hi)
{
	(void)a;
#pragma omp simd
	for (size_t i = lo; i < hi; i++)
		b[i] = s * c[i];
}

static void add_generic(double *restrict a, double *restrict b, double *restrict c,
			double s, size_t lo, size_t hi)
{
	(void)s;
#pragma omp simd
	for (size_t i = lo; i < hi; i++)
		c[i] = a[i] + b[i];
}

static void triad_generic(double *restrict a, double *restrict b, double *restrict c,
			  double s, size_t lo, size_t hi)
{
#pragma omp simd
	for (size_t i = lo; i < hi; i++)
		a[i] = b[i] + s * c[i];
}

#if ST_X86
/* ---- x86 intrinsics ------------------------------------------------------
 * ST_GEN4 defines the four kernels of one variant. The main loop moves two
 * 64-byte cache lines per iteration (LINES vectors of W doubles each); a
 * scalar head runs until the destination is vector aligned (the arrays are
 * 64-byte aligned and the chunks whole cache lines, so it normally does
 * nothing) and a scalar tail finishes. Loads are unaligned-safe. */
#define ST_GEN1(NAME, TGT, VT, W, LOADU, STORE, ADD, MUL, SET1, FENCE, DST, EXPR_V, EXPR_S) \
	__attribute__((target(TGT))) static void NAME(double *restrict a, double *restrict b, \
						      double *restrict c, double s, size_t lo, size_t hi) \
	{										\
		const VT vs = SET1(s);							\
		size_t i = lo;								\
		(void)vs;								\
		(void)a;								\
		(void)b;								\
		(void)c;								\
		for (; i < hi && ((uintptr_t)(DST + i) % (W * sizeof(double))); i++)	\
			DST[i] = EXPR_S;						\
		for (; i + 128 / sizeof(double) <= hi; i += 128 / sizeof(double)) {	\
			_Pragma("GCC unroll 16")					\
			for (size_t u = 0; u < 128 / sizeof(double); u += W) {		\
				const size_t j = i + u;					\
				STORE(DST + j, EXPR_V);					\
			}								\
		}									\
		for (; i < hi; i++)							\
			DST[i] = EXPR_S;						\
		FENCE;									\
	}

#define ST_GEN4(SUFFIX, TGT, VT, W, LOADU, STORE, ADD, MUL, SET1, FENCE)		\
	ST_GEN1(copy_##SUFFIX, TGT, VT, W, LOADU, STORE, ADD, MUL, SET1, FENCE, c,	\
		LOADU(a + j), a[i])							\
	ST_GEN1(scale_##SUFFIX, TGT, VT, W, LOADU, STORE, ADD, MUL, SET1, FENCE, b,	\
		MUL(vs, LOADU(c + j)), s * c[i])					\
	ST_GEN1(add_##SUFFIX, TGT, VT, W, LOADU, STORE, ADD, MUL, SET1, FENCE, c,	\
		ADD(LOADU(a + j), LOADU(b + j)), a[i] + b[i])				\
	ST_GEN1(triad_##SUFFIX, TGT, VT, W, LOADU, STORE, ADD, MUL, SET1, FENCE, a,	\
		ADD(LOADU(b + j), MUL(vs, LOADU(c + j))), b[i] + s * c[i])

#define ST_NOFENCE ((void)0)

ST_GEN4(sse2, "sse2", __m128d, 2, _mm_loadu_pd, _mm_store_pd, _mm_add_pd, _mm_mul_pd,
	_mm_set1_pd, ST_NOFENCE)
ST_GEN4(sse2_nt, "sse2", __m128d, 2, _mm_loadu_pd, _mm_stream_pd, _mm_add_pd, _mm_mul_pd,
	_mm_set1_pd, _mm_sfence())
ST_GEN4(avx, "avx", __m256d, 4, _mm256_loadu_pd, _mm256_store_pd, _mm256_add_pd,
	_mm256_mul_pd, _mm256_set1_pd, ST_NOFENCE)
ST_GEN4(avx_nt, "avx", __m256d, 4, _mm256_loadu_pd, _mm256_stream_pd, _mm256_add_pd,
	_mm256_mul_pd, _mm256_set1_pd, _mm_sfence())
ST_GEN4(avx512, "avx512f", __m512d, 8, _mm512_loadu_pd, _mm512_store_pd, _mm512_add_pd,
	_mm512_mul_pd, _mm512_set1_pd, ST_NOFENCE)
ST_GEN4(avx512_nt, "avx512f", __m512d, 8, _mm512_loadu_pd, _mm512_stream_pd,
	_mm512_add_pd, _mm512_mul_pd, _mm512_set1_pd, _mm_sfence())
#endif

#define ST_ROW(S) { copy_##S, scale_##S, add_##S, triad_##S }

/* [isa][streaming][kernel] */
static const st_kernel_fn table[ST_NISA][2][ST_NKERNELS] = {
	[ST_ISA_GENERIC] = { ST_ROW(generic), ST_ROW(generic) },
#if ST_X86
	[ST_ISA_SSE2] = { ST_ROW(sse2), ST_ROW(sse2_nt) },
	[ST_ISA_AVX] = { ST_ROW(avx), ST_ROW(avx_nt) },
	[ST_ISA_AVX512] = { ST_ROW(avx512), ST_ROW(avx512_nt) },
#endif
};

bool st_isa_supported(enum st_isa isa)
{
	switch (isa) {
	case ST_ISA_GENERIC:
		return true;
#if ST_X86
	/* __builtin_cpu_supports also checks that the kernel saves the
	 * register state (XCR0), not only the CPUID bit. */
	case ST_ISA_SSE2:
		return __builtin_cpu_supports("sse2");
	case ST_ISA_AVX:
		return __builtin_cpu_supports("avx");
	case ST_ISA_AVX512:
		return __builtin_cpu_supports("avx512f");
#endif
	default:
		return false;
	}
}

enum st_isa st_isa_best(void)
{
	for (int i = ST_NISA - 1; i > ST_ISA_GENERIC; i--)
		if (st_isa_supported((enum st_isa)i))
			return (enum st_isa)i;
	return ST_ISA_GENERIC;
}

enum st_isa st_isa_auto(void)
{
	enum st_isa w = st_isa_best();

#if ST_X86
	/* Zen 4 executes a 512-bit store as two 256-bit halves, so its
	 * 256-bit streaming stores reach the higher bandwidth. */
	if (w == ST_ISA_AVX512 && __builtin_cpu_is("amd"))
		return ST_ISA_AVX;
#endif
	return w;
}

bool st_isa_has_streaming(enum st_isa isa)
{
	return isa != ST_ISA_GENERIC && isa != ST_ISA_AUTO;
}

st_kernel_fn st_kernel_get(enum st_isa isa, bool streaming, enum st_kernel k)
{
	return table[isa][streaming && st_isa_has_streaming(isa)][k];
}
