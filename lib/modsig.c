// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"
#include "modsig.h"
#include "child.h"
#include "errbuf.h"

#include <stdio.h>
#include <string.h>

/* The EFI global variable the firmware sets to 1 when Secure Boot is on:
 * 4 bytes of attributes, then the value. */
#define SECURE_BOOT_VAR "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"

/* The first line of root/path, without its newline; "" when unreadable. */
static void read_line(const char *root, const char *path, char *buf, size_t len)
{
	char full[512];
	FILE *f;

	buf[0] = '\0';
	snprintf(full, sizeof(full), "%s%s", root, path);
	f = fopen(full, "re");
	if (!f)
		return;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

static int flag(const char *v)
{
	if (!strcmp(v, "Y") || !strcmp(v, "1"))
		return 1;
	if (!strcmp(v, "N") || !strcmp(v, "0"))
		return 0;
	return -1;
}

void zs_modsig_kernel_read(const char *root, struct zs_modsig_kernel *k)
{
	char v[128], full[512];
	unsigned char var[5];
	const char *open_br, *close_br;
	FILE *f;

	read_line(root, "/sys/module/module/parameters/sig_enforce", v, sizeof(v));
	k->sig_enforce = flag(v);
	read_line(root, "/proc/sys/kernel/modules_disabled", v, sizeof(v));
	k->modules_disabled = flag(v);
	/* "none [integrity] confidentiality": the bracketed one is in force. */
	read_line(root, "/sys/kernel/security/lockdown", v, sizeof(v));
	k->lockdown[0] = '\0';
	open_br = strchr(v, '[');
	close_br = open_br ? strchr(open_br, ']') : NULL;
	if (close_br && (size_t)(close_br - open_br - 1) < sizeof(k->lockdown))
		snprintf(k->lockdown, sizeof(k->lockdown), "%.*s", (int)(close_br - open_br - 1),
			 open_br + 1);
	k->secure_boot = -1;
	snprintf(full, sizeof(full), "%s%s", root, SECURE_BOOT_VAR);
	f = fopen(full, "re");
	if (f) {
		if (fread(var, 1, sizeof(var), f) == sizeof(var))
			k->secure_boot = var[4] == 1;
		fclose(f);
	}
}

bool zs_modsig_enforced(const struct zs_modsig_kernel *k)
{
	return k->sig_enforce == 1 || (k->lockdown[0] && strcmp(k->lockdown, "none"));
}

enum zs_modrefusal zs_modrefusal_classify(const char *output, const struct zs_modsig_kernel *k)
{
	/* strerror(EKEYREJECTED): what the kernel returns for a module it
	 * will not load for its signature when signatures are enforced. */
	if (strstr(output, "Key was rejected by service"))
		return ZS_MODREFUSAL_SIGNATURE;
	if (!strstr(output, "Operation not permitted"))
		return ZS_MODREFUSAL_NONE;
	if (k->modules_disabled == 1)
		return ZS_MODREFUSAL_DISABLED;
	/* EPERM with lockdown in force and signatures not enforced: the
	 * kernel's answer to an unsigned (or untrusted) module. */
	if (k->lockdown[0] && strcmp(k->lockdown, "none"))
		return ZS_MODREFUSAL_LOCKDOWN;
	return ZS_MODREFUSAL_NONE;
}

enum zs_modrefusal zs_modsig_predict(const struct zs_modsig_kernel *k, const char *signer)
{
	if (signer[0] || !zs_modsig_enforced(k))
		return ZS_MODREFUSAL_NONE;
	return k->sig_enforce == 1 ? ZS_MODREFUSAL_SIGNATURE : ZS_MODREFUSAL_LOCKDOWN;
}

const char *zs_modrefusal_name(enum zs_modrefusal r)
{
	switch (r) {
	case ZS_MODREFUSAL_SIGNATURE: return "signature";
	case ZS_MODREFUSAL_LOCKDOWN: return "lockdown";
	case ZS_MODREFUSAL_DISABLED: return "disabled";
	case ZS_MODREFUSAL_NONE: break;
	}
	return "none";
}

const char *zs_modsig_kernel_describe(const struct zs_modsig_kernel *k, char *buf, size_t len)
{
	snprintf(buf, len, "Secure Boot %s, module.sig_enforce=%s, lockdown %s",
		 k->secure_boot == 1 ? "on" : k->secure_boot == 0 ? "off" : "unknown",
		 k->sig_enforce == 1 ? "1" : k->sig_enforce == 0 ? "0" : "unknown",
		 k->lockdown[0] ? k->lockdown : "unknown");
	return buf;
}

const char *zs_modrefusal_explain(enum zs_modrefusal r, const char *module,
				  const struct zs_modsig_kernel *k, char *buf, size_t len)
{
	char kd[128];

	zs_modsig_kernel_describe(k, kd, sizeof(kd));
	switch (r) {
	case ZS_MODREFUSAL_SIGNATURE:
		snprintf(buf, len, "modprobe %s refused by the kernel: signature (Key was rejected by service; %s): "
			 "the module must be signed with a key the kernel trusts, such as DKMS's MOK key enrolled with mokutil --import (zonesort(8), SECURE BOOT)",
			 module, kd);
		break;
	case ZS_MODREFUSAL_LOCKDOWN:
		snprintf(buf, len, "modprobe %s refused by the kernel: lockdown (Operation not permitted; %s): "
			 "under lockdown only signed modules load; sign it with a key enrolled with mokutil --import (zonesort(8), SECURE BOOT)",
			 module, kd);
		break;
	case ZS_MODREFUSAL_DISABLED:
		snprintf(buf, len, "modprobe %s refused by the kernel: disabled (kernel.modules_disabled=1: no module loads until reboot)",
			 module);
		break;
	case ZS_MODREFUSAL_NONE:
		snprintf(buf, len, "modprobe %s: not refused for its signature (%s)", module, kd);
		break;
	}
	return buf;
}

/* The value of "field:" in modinfo's output, or "". */
static void modinfo_field(const char *out, const char *field, char *buf, size_t len)
{
	size_t n = strlen(field);

	buf[0] = '\0';
	for (const char *line = out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if (strncmp(line, field, n) || line[n] != ':')
			continue;
		line += n + 1;
		line += strspn(line, " \t");
		snprintf(buf, len, "%.*s", (int)strcspn(line, "\n"), line);
		return;
	}
}

int zs_modsig_module(const char *module, char *file, size_t flen, char *signer, size_t slen,
		     char *err)
{
	char out[4096], why[ZS_ERRLEN];
	char *argv[] = { "modinfo", (char *)module, NULL };
	int rc = zs_run("/sbin/modinfo", argv, 5000, out, sizeof(out), why);

	file[0] = signer[0] = '\0';
	if (rc < 0)
		return zs_fail(err, "modinfo %s: %s", module, why);
	if (rc != 0) {
		const char *msg = out;

		out[strcspn(out, "\n")] = '\0';
		if (!strncmp(msg, "modinfo: ", 9))
			msg += 9;
		return zs_fail(err, "no %s module for the running kernel (modinfo: %s)", module, msg);
	}
	modinfo_field(out, "filename", file, flen);
	modinfo_field(out, "signer", signer, slen);
	return 0;
}
