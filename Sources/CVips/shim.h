#include <vips/vips.h>

/* libvips's calls that C declares variadic, or as macros, wrapped as plain functions Swift can call. */

static void hearth_vips_drop_log(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {}

/* Starts libvips; its warnings about damaged uploads go nowhere (its errors come back through the calls). */
static inline int hearth_vips_init(void) {
    if (VIPS_INIT("hearth") != 0) return -1;
    g_log_set_handler("VIPS", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO | G_LOG_LEVEL_DEBUG,
                      hearth_vips_drop_log, NULL);
    return 0;
}

typedef gint64 (*hearth_vips_read_fn)(VipsSourceCustom *source, void *buffer, gint64 length, void *context);
typedef gint64 (*hearth_vips_seek_fn)(VipsSourceCustom *source, gint64 offset, int whence, void *context);

/* A source that reads through the two callbacks (`context` is handed to both). */
static inline VipsSource *hearth_vips_source(hearth_vips_read_fn read, hearth_vips_seek_fn seek, void *context) {
    VipsSourceCustom *source = vips_source_custom_new();
    g_signal_connect(source, "read", G_CALLBACK(read), context);
    g_signal_connect(source, "seek", G_CALLBACK(seek), context);
    return VIPS_SOURCE(source);
}

/* The image's header only: sequential access decodes no pixel until one is asked for. */
static inline VipsImage *hearth_vips_header(VipsSource *source) {
    return vips_image_new_from_source(source, "", "access", VIPS_ACCESS_SEQUENTIAL, NULL);
}

/* Shrink-on-load to fit within width x height, never enlarging; the first page (frame) only. */
static inline int hearth_vips_thumbnail(VipsSource *source, VipsImage **out, int width, int height) {
    return vips_thumbnail_source(source, out, width, "height", height, "size", VIPS_SIZE_DOWN, NULL);
}

static inline int hearth_vips_jpegsave(VipsImage *image, void **buffer, size_t *length) {
    return vips_jpegsave_buffer(image, buffer, length, "Q", 85, "strip", TRUE, NULL);
}

static inline int hearth_vips_pngsave(VipsImage *image, void **buffer, size_t *length) {
    return vips_pngsave_buffer(image, buffer, length, "strip", TRUE, NULL);
}

static inline int hearth_vips_webpsave(VipsImage *image, void **buffer, size_t *length) {
    return vips_webpsave_buffer(image, buffer, length, "Q", 80, "strip", TRUE, NULL);
}

static inline void hearth_vips_unref(void *object) { g_object_unref(object); }

/* Tests make images in any format with these, and read back what a thumbnail holds. */
static inline int hearth_vips_save_as(VipsImage *image, const char *suffix, void **buffer, size_t *length) {
    return vips_image_write_to_buffer(image, suffix, buffer, length, NULL);
}

static inline VipsImage *hearth_vips_load_buffer(const void *buffer, size_t length) {
    return vips_image_new_from_buffer(buffer, length, "", NULL);
}
