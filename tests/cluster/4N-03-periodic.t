#!/bin/bash
# 03-periodic.t on a cluster of four nodes, each slurmd in its own namespaces.
ZS_NODES=4 exec bash "$(dirname "$0")/03-periodic.t"
