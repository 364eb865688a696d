/* A small file read whole: a certificate, a key, a CA bundle. */
#ifndef EBB_TEXTFILE_H
#define EBB_TEXTFILE_H

#include <stddef.h>

/* The file's bytes, NUL-terminated (free them), their count in *len when
 * len is not NULL; NULL with the reason in err ("cannot read: ...", or
 * over max bytes) when it cannot be had. */
char *textfile_read(const char *path, size_t max, size_t *len, char *err, size_t errsize);

#endif
