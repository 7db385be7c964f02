/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The bit of JSON writing the commands share. */
#ifndef ZS_JSON_H
#define ZS_JSON_H

#include <stdio.h>

/* Writes s as a JSON string literal, quotes included. */
void zs_json_string(FILE *f, const char *s);

#endif
