#ifndef TESSERA_CSTEMMER_SHIM_H
#define TESSERA_CSTEMMER_SHIM_H
#include <libstemmer.h>
#endif
