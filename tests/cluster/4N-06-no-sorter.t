#!/bin/bash
# 06-no-sorter.t on a cluster of four nodes, each slurmd in its own namespaces.
# needs: a quiet host (as 06-no-sorter.t)
ZS_NODES=4 exec bash "$(dirname "$0")/06-no-sorter.t"
