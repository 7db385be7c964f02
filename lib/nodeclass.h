/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Node classes of plugstack.conf: which Slurm node this is, and whether a
 * node selector names it. A selector is
 *   *                  every node
 *   a glob             of node names: xmax*, n?1 (letters, digits, . _ -)
 *   a Slurm host list  of one name pattern: knl[001-128], r[1-2]n[01-16],
 *                      knl[001-004,010]; a number matches as Slurm expands
 *                      it, zero-padded to the width of the range's first
 *                      bound (knl[001-128] names knl007, not knl7)
 * A glob and brackets are not mixed, as in zonesort-health-check's options
 * file. Node features are not selectors here: the plugin would have to
 * ask slurmctld for them in every prolog and step. */
#ifndef ZS_NODECLASS_H
#define ZS_NODECLASS_H

#include <stdbool.h>
#include <stddef.h>

/* Longest selector and node name taken. */
#define ZS_NODE_NAME_MAX 255

/* Checks a selector's form; the error names what (e.g. "cache_size=...")
 * and the selector. */
int zs_nodeclass_check(const char *what, const char *sel, char *err);

/* True when a selector that passed zs_nodeclass_check names node. */
bool zs_nodeclass_match(const char *sel, const char *node);

/* This node's Slurm name: $SLURMD_NODENAME, else the short host name. */
const char *zs_node_name(char *buf, size_t len);

#endif
