// Small POSIX calls that Swift's Glibc module does not declare (they need _GNU_SOURCE).
#ifndef TESSERA_CSUPPORT_H
#define TESSERA_CSUPPORT_H

/// Names the calling thread (debuggers and `top -H` show it). Linux keeps the first 15 bytes;
/// longer names are cut. Returns 0, or an errno value.
int tessera_name_this_thread(const char *name);

#endif
