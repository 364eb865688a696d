/* Durations and sizes as people write them in configs and flags:
 * "500ms", "3s", "10m", "1h", "2d"; "512B", "64KiB", "1MiB", "1GiB". */
#ifndef EBB_UNITS_H
#define EBB_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* 0 on success, -1 when s is not a number followed by a known unit. */
int parse_duration_ms(const char *s, int64_t *out_ms);
int parse_size_bytes(const char *s, int64_t *out_bytes);
int parse_int64(const char *s, int64_t *out);
int parse_double(const char *s, double *out);
/* A number or a fraction of two: "0.25" or "1/4". */
int parse_fraction(const char *s, double *out);

/* The shortest exact form: 90000 -> "90s", 3600000 -> "1h". */
void format_duration(char *buf, size_t size, int64_t ms);
void format_size(char *buf, size_t size, int64_t bytes);
/* A span as people read it, to its two largest units, rounded down:
 * "45 s", "12 m", "1 h 5 m", "3 d 4 h". */
void format_elapsed(char *buf, size_t size, int64_t ms);

#endif
