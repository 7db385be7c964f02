#!/bin/bash
# 05-unprivileged.t on a cluster of four nodes, each slurmd in its own namespaces.
ZS_NODES=4 exec bash "$(dirname "$0")/05-unprivileged.t"
