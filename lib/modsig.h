/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Why the kernel refused to load a module, by name: its signature
 * (Secure Boot or module.sig_enforce, "Key was rejected by service"),
 * kernel lockdown (an unsigned module under lockdown=integrity, "Operation
 * not permitted"), or module loading switched off (kernel.modules_disabled);
 * and what the running kernel asks of a module's signature, for
 * "zonesort status" to tell before any load is tried. */
#ifndef ZS_MODSIG_H
#define ZS_MODSIG_H

#include <stdbool.h>
#include <stddef.h>

enum zs_modrefusal {
	ZS_MODREFUSAL_NONE,		/* loaded, or failed for another reason */
	ZS_MODREFUSAL_SIGNATURE,	/* EKEYREJECTED: unsigned, or a key the kernel does not trust */
	ZS_MODREFUSAL_LOCKDOWN,		/* EPERM under lockdown: unsigned modules restricted */
	ZS_MODREFUSAL_DISABLED,		/* EPERM: kernel.modules_disabled=1 */
};

/* What the running kernel asks of modules. */
struct zs_modsig_kernel {
	int sig_enforce;	/* module.sig_enforce: 1, 0, -1 unknown (no CONFIG_MODULE_SIG) */
	char lockdown[16];	/* "none", "integrity", "confidentiality"; "" unknown */
	int secure_boot;	/* EFI SecureBoot variable: 1, 0, -1 not an EFI boot or unreadable */
	int modules_disabled;	/* kernel.modules_disabled: 1, 0, -1 unknown */
};

/* Reads the kernel's settings under root ("" for the running system; the
 * unit tests give a directory standing in for /sys and /proc). */
void zs_modsig_kernel_read(const char *root, struct zs_modsig_kernel *k);

/* True when the kernel loads only modules signed by a key it trusts
 * (sig_enforce) or refuses unsigned ones (lockdown). */
bool zs_modsig_enforced(const struct zs_modsig_kernel *k);

/* The refusal a failed modprobe's output shows, given the kernel's
 * settings: the kernel's error text is what modprobe prints. */
enum zs_modrefusal zs_modrefusal_classify(const char *output, const struct zs_modsig_kernel *k);

/* "signature", "lockdown", "disabled" or "none": the name the status,
 * the plugin's log line and the metrics use. */
const char *zs_modrefusal_name(enum zs_modrefusal r);

/* One sentence for an administrator: the refusal by name, the kernel
 * settings behind it and what to do (zonesort(8), SECURE BOOT). */
const char *zs_modrefusal_explain(enum zs_modrefusal r, const char *module,
				  const struct zs_modsig_kernel *k, char *buf, size_t len);

/* The module file modprobe would load for the running kernel and who
 * signed it ("" when unsigned), from modinfo. Returns 0, or -1 with err
 * set when no such module is installed for this kernel. */
int zs_modsig_module(const char *module, char *file, size_t flen, char *signer, size_t slen,
		     char *err);

/* The refusal a load of a module signed by signer ("" unsigned) will meet:
 * an unsigned module where signatures are enforced or under lockdown.
 * Whether the kernel trusts a signer's key only a load tells. */
enum zs_modrefusal zs_modsig_predict(const struct zs_modsig_kernel *k, const char *signer);

/* "Secure Boot on, module.sig_enforce=1, lockdown integrity" */
const char *zs_modsig_kernel_describe(const struct zs_modsig_kernel *k, char *buf, size_t len);

#endif
