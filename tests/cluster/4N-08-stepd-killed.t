#!/bin/bash
# 08-stepd-killed.t on a cluster of four nodes, each slurmd in its own namespaces.
ZS_NODES=4 exec bash "$(dirname "$0")/08-stepd-killed.t"
