/* Whole-buffer number parsing for the pattern file readers (topomap.io).
 *
 * Grammar (the strict Python tier in topomap/io/_text.py implements the same):
 *   separators  ' ' '\t' '\v' '\f' '\r', and ',' when `commas` is set; '\n' ends a line
 *   integer     [+-]?[0-9]+, -2^63 < value < 2^63 - 1
 *   number      an integer, [+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?, or
 *               [+-]?(inf|infinity|nan) in any case; converted with correct rounding
 * A buffer has as many lines as '\n' characters, plus one when it does not end
 * with '\n'.
 */
#ifndef TOPOMAP_TOKENIZE_H
#define TOPOMAP_TOKENIZE_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Number of tokens and lines in buf[0..len). */
void topomap_count_tokens(const char *buf, int64_t len, int commas, int64_t *tokens, int64_t *lines);

/* Parse every token of buf[0..len) into `values` (int64_t when `integer`, else
 * double; as many as topomap_count_tokens counted) and the number of tokens of
 * each line into `line_counts`.
 * Returns 0; TOPOMAP_EINVAL when a token is outside the grammar, with
 * *bad_offset set to its byte offset; TOPOMAP_ENOTSUP when a valid number
 * could not be converted here (a decimal number longer than 127 characters, or
 * a C library whose locale does not read '.' as the decimal point), with
 * *bad_offset set likewise: the caller converts that buffer another way. */
int topomap_parse_numbers(const char *buf, int64_t len, int integer, int commas, void *values,
                          int64_t *line_counts, int64_t *bad_offset);

#ifdef __cplusplus
}
#endif
#endif
