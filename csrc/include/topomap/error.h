/* Error codes and the thread-local error message of the topomap C core. */
#ifndef TOPOMAP_ERROR_H
#define TOPOMAP_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

enum {
    TOPOMAP_OK = 0,
    TOPOMAP_ENOMEM = -1,    /* allocation failed */
    TOPOMAP_EINVAL = -2,    /* invalid argument; the message names it */
    TOPOMAP_ECANCELED = -3, /* the caller's cancel flag was set */
    TOPOMAP_ENOTSUP = -4    /* not supported by this machine kind or build */
};

/* Message of the last failure in this thread ("" if none). */
const char *topomap_last_error(void);

/* Record a failure message (printf-style) and return `code`. */
int topomap_i_fail(int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#ifdef __cplusplus
}
#endif
#endif
