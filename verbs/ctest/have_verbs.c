/*
 * have_verbs.c: the Makefile preprocesses this file to learn whether the
 * rdma-core headers are installed (and so whether to build the rdma
 * provider). A file rather than a shell one-liner: a '#' inside $(shell ...)
 * is a comment, an escaped one, or a literal backslash, depending on the
 * version of GNU make.
 */
#include <infiniband/verbs.h>
