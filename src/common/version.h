/* ebb's version: what `ebb version` prints and the client sends. */
#ifndef EBB_VERSION_H
#define EBB_VERSION_H

#define EBB_VERSION "0.1.0"

#endif
