// SPDX-License-Identifier: GPL-2.0-or-later
/* Telling a module refused for its signature, by kernel lockdown or with
 * module loading disabled from other modprobe failures, and reading what
 * the kernel asks of modules. The error texts are those of kmod's and
 * busybox's modprobe; the kernel settings are read from a directory
 * standing in for /sys and /proc (this build host cannot be put under
 * Secure Boot or lockdown). The real refusals are tested in QEMU guests
 * booted with module.sig_enforce=1 and lockdown=integrity
 * (tests/node/40-module-refused.t). */
#include "config.h"
#include "modsig.h"
#include "tap.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char top[] = "/tmp/zs-test-modsig.XXXXXX";

static void put(const char *rel, const void *data, size_t len)
{
	char path[PATH_MAX], cmd[PATH_MAX + 16];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", top, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s", path);
	*strrchr(cmd, '/') = '\0';
	if (system(cmd))
		printf("# %s failed\n", cmd);
	f = fopen(path, "w");
	if (f) {
		fwrite(data, 1, len, f);
		fclose(f);
	}
}

static void kernel_settings(void)
{
	static const unsigned char sb_on[] = { 6, 0, 0, 0, 1 }, sb_off[] = { 6, 0, 0, 0, 0 };
	struct zs_modsig_kernel k;
	char buf[256];

	zs_modsig_kernel_read(top, &k);
	ok(k.sig_enforce == -1 && k.modules_disabled == -1 && k.secure_boot == -1 && !k.lockdown[0],
	   "nothing readable: every setting unknown");
	ok(!zs_modsig_enforced(&k), "... and nothing enforced");
	put("/sys/module/module/parameters/sig_enforce", "N\n", 2);
	put("/sys/kernel/security/lockdown", "[none] integrity confidentiality\n", 33);
	put("/proc/sys/kernel/modules_disabled", "0\n", 2);
	put("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c", sb_off, 5);
	zs_modsig_kernel_read(top, &k);
	ok(k.sig_enforce == 0 && k.modules_disabled == 0 && k.secure_boot == 0 && !strcmp(k.lockdown, "none"),
	   "a kernel that loads anything: sig_enforce N, lockdown none, Secure Boot off");
	ok(!zs_modsig_enforced(&k), "... enforces nothing");
	put("/sys/kernel/security/lockdown", "none [integrity] confidentiality\n", 33);
	zs_modsig_kernel_read(top, &k);
	is_str(k.lockdown, "integrity", "the bracketed lockdown mode is the one in force");
	ok(zs_modsig_enforced(&k), "lockdown integrity refuses unsigned modules");
	put("/sys/kernel/security/lockdown", "[none] integrity confidentiality\n", 33);
	put("/sys/module/module/parameters/sig_enforce", "Y\n", 2);
	put("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c", sb_on, 5);
	zs_modsig_kernel_read(top, &k);
	ok(k.sig_enforce == 1 && k.secure_boot == 1 && zs_modsig_enforced(&k),
	   "Secure Boot on (the variable's fifth byte), sig_enforce Y: enforced");
	err_has(zs_modsig_kernel_describe(&k, buf, sizeof(buf)), "Secure Boot on, module.sig_enforce=1, lockdown none",
		"described in one line");
}

static const struct zs_modsig_kernel plain = { .sig_enforce = 0, .lockdown = "none", .secure_boot = 0 };
static const struct zs_modsig_kernel locked = { .sig_enforce = 0, .lockdown = "integrity", .secure_boot = 1 };
static const struct zs_modsig_kernel off = { .sig_enforce = 0, .lockdown = "none", .modules_disabled = 1 };

static void classify(void)
{
	static const struct {
		const char *out;
		const struct zs_modsig_kernel *k;
		enum zs_modrefusal want;
		const char *what;
	} cases[] = {
		{ "modprobe: ERROR: could not insert 'zonesort': Key was rejected by service", &plain,
		  ZS_MODREFUSAL_SIGNATURE, "kmod's modprobe, EKEYREJECTED: signature" },
		{ "modprobe: can't load module zonesort (extra/zonesort.ko): Key was rejected by service", &plain,
		  ZS_MODREFUSAL_SIGNATURE, "busybox's modprobe, EKEYREJECTED: signature" },
		{ "modprobe: ERROR: could not insert 'zonesort': Operation not permitted", &locked,
		  ZS_MODREFUSAL_LOCKDOWN, "EPERM under lockdown integrity: lockdown" },
		{ "modprobe: ERROR: could not insert 'zonesort': Operation not permitted", &off,
		  ZS_MODREFUSAL_DISABLED, "EPERM with kernel.modules_disabled=1: disabled" },
		{ "modprobe: ERROR: could not insert 'zonesort': Operation not permitted", &plain,
		  ZS_MODREFUSAL_NONE, "EPERM with neither (not root): not a signature refusal" },
		{ "modprobe: FATAL: Module zonesort not found in directory /lib/modules/6.1.0-28-amd64", &locked,
		  ZS_MODREFUSAL_NONE, "a module that is not installed: not a refusal" },
		{ "modprobe: ERROR: could not insert 'zonesort': Exec format error", &locked,
		  ZS_MODREFUSAL_NONE, "a module for another kernel: not a refusal" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum zs_modrefusal got = zs_modrefusal_classify(cases[i].out, cases[i].k);

		ok(got == cases[i].want, "%s (%s)", cases[i].what, zs_modrefusal_name(got));
	}
}

static void predict_and_explain(void)
{
	struct zs_modsig_kernel enforce = { .sig_enforce = 1, .lockdown = "none", .secure_boot = 1 };
	char buf[1024];

	ok(zs_modsig_predict(&enforce, "") == ZS_MODREFUSAL_SIGNATURE, "unsigned, sig_enforce: refused (signature)");
	ok(zs_modsig_predict(&locked, "") == ZS_MODREFUSAL_LOCKDOWN, "unsigned, lockdown: refused (lockdown)");
	ok(zs_modsig_predict(&enforce, "DKMS module signing key") == ZS_MODREFUSAL_NONE,
	   "signed: only a load tells whether the key is trusted");
	ok(zs_modsig_predict(&plain, "") == ZS_MODREFUSAL_NONE, "unsigned, nothing enforced: loads");
	zs_modrefusal_explain(ZS_MODREFUSAL_SIGNATURE, "zonesort", &enforce, buf, sizeof(buf));
	err_has(buf, "modprobe zonesort refused by the kernel: signature", "the explanation names the module and the refusal");
	err_has(buf, "Key was rejected by service", "... the kernel's words");
	err_has(buf, "Secure Boot on", "... the kernel's settings");
	err_has(buf, "mokutil --import", "... and what to do");
	err_has(buf, "zonesort(8)", "... and where it is described");
	zs_modrefusal_explain(ZS_MODREFUSAL_LOCKDOWN, "zonesort", &locked, buf, sizeof(buf));
	err_has(buf, "refused by the kernel: lockdown", "lockdown is named as such");
	is_str(zs_modrefusal_name(ZS_MODREFUSAL_DISABLED), "disabled", "names: disabled");
	is_str(zs_modrefusal_name(ZS_MODREFUSAL_NONE), "none", "names: none");
}

int main(void)
{
	char cmd[128];

	if (!mkdtemp(top)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	kernel_settings();
	classify();
	predict_and_explain();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
	if (system(cmd))
		printf("# could not remove %s\n", top);
	return done_testing();
}
