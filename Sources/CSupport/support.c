#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>
#include "CSupport.h"

int tessera_name_this_thread(const char *name) {
#if defined(__APPLE__)
    return pthread_setname_np(name);
#else
    char cut[16];
    strncpy(cut, name, sizeof cut - 1);
    cut[sizeof cut - 1] = 0;
    return pthread_setname_np(pthread_self(), cut);
#endif
}
