// SPDX-License-Identifier: GPL-2.0-or-later
/* Bounded writes to the kernel's files; see kwrite.h. */
#include "config.h"
#include "kwrite.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct kwrite_arg {
	const char *path;
	const char *text;
	size_t len;		/* measured before the fork */
};

/* In the child, between fork and _exit: async-signal-safe calls only.
 * The errno of what failed, 0 when the text was written whole. */
static int write_in_child(void *p)
{
	const struct kwrite_arg *a = p;
	int fd = open(a->path, O_WRONLY | O_CLOEXEC), e;
	ssize_t w;

	if (fd < 0)
		return errno;
	w = write(fd, a->text, a->len);
	e = errno;
	/* An error of close counts only when the write itself went
	 * through, as it always did here. */
	if (close(fd) && w == (ssize_t)a->len)
		return errno;
	if (w == (ssize_t)a->len)
		return 0;
	return w >= 0 ? EIO : e;
}

/* The same for data of any length: write(2) after write(2) until all of
 * it is written (a binary sysfs file takes a page per call); a call that
 * writes nothing is EIO. */
static int write_all_in_child(void *p)
{
	const struct kwrite_arg *a = p;
	int fd = open(a->path, O_WRONLY | O_CLOEXEC), e = 0;
	size_t done = 0;

	if (fd < 0)
		return errno;
	while (done < a->len) {
		ssize_t w = write(fd, a->text + done, a->len - done);

		if (w <= 0) {
			e = w < 0 ? errno : EIO;
			break;
		}
		done += (size_t)w;
	}
	if (close(fd) && !e)
		e = errno;
	return e;
}

static int kwrite_call(int (*fn)(void *), struct kwrite_arg *a, unsigned timeout_s,
		       struct zs_kwrite *w)
{
	int result = 0;

	memset(w, 0, sizeof(*w));
	w->timeout_s = timeout_s;
	w->end = zs_call(fn, a, (int)timeout_s * 1000, ZS_KWRITE_KILL_MS, &result, w->why);
	if (w->end == ZS_CALL_DONE)
		w->err_no = result;
	return w->end == ZS_CALL_DONE && !result ? 0 : -1;
}

int zs_kwrite_data(const char *path, const void *data, size_t len, unsigned timeout_s,
		   struct zs_kwrite *w)
{
	struct kwrite_arg a = { .path = path, .text = data, .len = len };

	return kwrite_call(write_all_in_child, &a, timeout_s, w);
}

int zs_kwrite(const char *path, const char *text, unsigned timeout_s, struct zs_kwrite *w)
{
	struct kwrite_arg a = { .path = path, .text = text, .len = strlen(text) };

	return kwrite_call(write_in_child, &a, timeout_s, w);
}

bool zs_kwrite_timed_out(const struct zs_kwrite *w)
{
	return w->end == ZS_CALL_STOPPED || w->end == ZS_CALL_LEFT;
}

const char *zs_kwrite_describe(const struct zs_kwrite *w, char *buf, size_t len)
{
	switch (w->end) {
	case ZS_CALL_STOPPED:
		snprintf(buf, len, "did not end within %u s (kernel_timeout): stopped", w->timeout_s);
		break;
	case ZS_CALL_LEFT:
		snprintf(buf, len,
			 "did not end within %u s (kernel_timeout): killed, but still in the kernel %d s later: left running, reaped when it ends",
			 w->timeout_s, ZS_KWRITE_KILL_MS / 1000);
		break;
	case ZS_CALL_FAILED:
		snprintf(buf, len, "no writer: %s", w->why);
		break;
	case ZS_CALL_DONE:
		snprintf(buf, len, "%s", strerror(w->err_no));
		break;
	}
	return buf;
}
