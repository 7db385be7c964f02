/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Limits every part of zonesort.ko keeps to.
 */
#ifndef ZONESORT_INTERNAL_H
#define ZONESORT_INTERNAL_H

/* List entries handled at most per lock hold (zone->lock with interrupts
 * off, a per-CPU list's lock, the quarantine's lock). */
#define ZS_BATCH 256

/* Seconds between the kernel-log lines of a wait on the kernel that has
 * no bound of its own (pages a migration isolated): such waits keep
 * scheduling, so the hung-task detector never names them. */
#define ZS_WAIT_WARN_S 10

#endif
