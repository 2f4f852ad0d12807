#ifndef TESSERA_CLMDB_SHIM_H
#define TESSERA_CLMDB_SHIM_H
#include <lmdb.h>
#endif
