/* A command line of the config (a type's handler) cut into its words, as
 * a shell cuts a simple command but without expanding anything: blanks
 * separate words; '...' keeps everything inside as it is; "..." keeps it
 * too but for \" and \\; outside quotes a backslash keeps the character
 * after it. The program is run without a shell, from these words. */
#ifndef EBB_WORDS_H
#define EBB_WORDS_H

#include <stddef.h>

/* The longest command line, and the most words of one. */
#define WORDS_LINE_MAX 4095
#define WORDS_MAX 256

/* Cuts line into buf (room for strlen(line) + 1 bytes at least), with
 * words[] pointing into it: how many words (at least one), or -1 with
 * why (an empty line, an unclosed quote, a trailing backslash, more than
 * max words). */
int words_split(const char *line, char *buf, char **words, int max, char *why, size_t whysize);

#endif
