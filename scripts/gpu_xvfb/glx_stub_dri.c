/* A stand-in for Mesa's swrast_dri.so that lets a carried Xvfb offer the GLX extension on a
 * host without Mesa (the GPU host), so that clients render directly through their own GL
 * vendor (NVIDIA's libGLX, chosen by __GLX_VENDOR_LIBRARY_NAME=nvidia). The X server's GLX
 * provider loads it from LIBGL_DRIVERS_PATH, asks for screen configs and nothing else unless a
 * client wants indirect rendering, which this refuses (no contexts). Mesa's own swrast driver
 * would need LLVM (over 100 MiB); Mesa 24.1 ships the same idea as its "dril" stub.
 * The structures mirror Mesa's GL/internal/dri_interface.h (core extension v1, swrast v3),
 * which Debian's headers do not install. Built by scripts/gpu_bundle.sh:
 *   cc -shared -fPIC -O2 -o swrast_dri.so glx_stub_dri.c */
#include <stdlib.h>
#include <string.h>

typedef struct DriExtension {
    const char* name;
    int version;
} DriExtension;

typedef struct DriConfig {
    unsigned red, green, blue, alpha, depth, stencil;
} DriConfig;

typedef void DriScreen;
typedef void DriDrawable;
typedef void DriContext;

typedef struct DriCoreExtension {
    DriExtension base;
    DriScreen* (*create_new_screen)(int, int, unsigned, const DriExtension**, const DriConfig***, void*);
    void (*destroy_screen)(DriScreen*);
    const DriExtension** (*get_extensions)(DriScreen*);
    int (*get_config_attrib)(const DriConfig*, unsigned, unsigned*);
    int (*index_config_attrib)(const DriConfig*, int, unsigned*, unsigned*);
    DriDrawable* (*create_new_drawable)(DriScreen*, const DriConfig*, unsigned, int*, void*);
    void (*destroy_drawable)(DriDrawable*);
    void (*swap_buffers)(DriDrawable*);
    DriContext* (*create_new_context)(DriScreen*, const DriConfig*, DriContext*, void*);
    int (*copy_context)(DriContext*, DriContext*, unsigned long);
    void (*destroy_context)(DriContext*);
    int (*bind_context)(DriContext*, DriDrawable*, DriDrawable*);
    int (*unbind_context)(DriContext*);
} DriCoreExtension;

/* Version 3: the server then offers GLX_ARB_create_context(_profile), which GLFW's core
 * profile needs; the two context entry points only refuse. */
typedef struct DriSwrastExtension {
    DriExtension base;
    DriScreen* (*create_new_screen)(int, const DriExtension**, const DriConfig***, void*);
    DriDrawable* (*create_new_drawable)(DriScreen*, const DriConfig*, void*);
    DriContext* (*create_new_context_for_api)(DriScreen*, int, const DriConfig*, DriContext*, void*);
    DriContext* (*create_context_attribs)(DriScreen*, int, const DriConfig*, DriContext*, unsigned, const unsigned*,
                                          unsigned*, void*);
} DriSwrastExtension;

/* __DRI_ATTRIB_* indices and values of dri_interface.h. */
enum {
    kBufferSize = 1,
    kRedSize = 3,
    kGreenSize = 4,
    kBlueSize = 5,
    kAlphaSize = 7,
    kDepthSize = 9,
    kStencilSize = 10,
    kRenderType = 17,
    kConformant = 19,
    kDoubleBuffer = 20,
    kTransparentType = 23,
    kTransparentIndex = 24,
    kTransparentRed = 25,
    kTransparentAlpha = 28,
    kRedMask = 30,
    kGreenMask = 31,
    kBlueMask = 32,
    kAlphaMask = 33,
    kSwapMethod = 40,
    kMaxSwapInterval = 41,
    kBindToTextureRgb = 43,
    kBindToTextureRgba = 44,
    kBindToTextureTargets = 46,
    kYInverted = 47,
    kRedShift = 50,
    kGreenShift = 51,
    kBlueShift = 52,
    kAlphaShift = 53,
    kAttribMax = 54
};
#define RGBA_BIT 0x01u
#define GLX_NONE 0x8000u
#define GLX_DONT_CARE 0xFFFFFFFFu
#define GLX_SWAP_UNDEFINED_OML 0x8063u

/* BGRA/BGRX 8888 as an X TrueColor visual lays them out (red in bits 16..23), with and
 * without depth/stencil: enough for a depth-24 screen and its 32-bit composite visual. */
static const DriConfig kConfigs[] = {
    {8, 8, 8, 0, 0, 0},
    {8, 8, 8, 0, 24, 8},
    {8, 8, 8, 8, 0, 0},
    {8, 8, 8, 8, 24, 8},
};
#define CONFIG_COUNT (sizeof kConfigs / sizeof kConfigs[0])

static unsigned shift_of(const DriConfig* c, int channel) {
    switch (channel) {
    case 0: return 16;
    case 1: return 8;
    case 2: return 0;
    default: return c->alpha ? 24 : 0;
    }
}

static unsigned mask_of(const DriConfig* c, int channel, unsigned bits) {
    return bits ? ((1u << bits) - 1u) << shift_of(c, channel) : 0;
}

/* The server walks indices from 0 until this returns 0; 0 is no attribute (value 0), as in Mesa. */
static int index_config_attrib(const DriConfig* c, int index, unsigned* attrib, unsigned* value) {
    if (index < 0 || index >= kAttribMax) return 0;
    unsigned v = 0;
    switch (index) {
    case kBufferSize: v = c->red + c->green + c->blue + c->alpha; break;
    case kRedSize: v = c->red; break;
    case kGreenSize: v = c->green; break;
    case kBlueSize: v = c->blue; break;
    case kAlphaSize: v = c->alpha; break;
    case kDepthSize: v = c->depth; break;
    case kStencilSize: v = c->stencil; break;
    case kRenderType: v = RGBA_BIT; break;
    case kConformant: v = 1; break;
    case kDoubleBuffer: v = 1; break;
    case kTransparentType: v = GLX_NONE; break;
    case kTransparentIndex: v = GLX_NONE; break;
    case kRedMask: v = mask_of(c, 0, c->red); break;
    case kGreenMask: v = mask_of(c, 1, c->green); break;
    case kBlueMask: v = mask_of(c, 2, c->blue); break;
    case kAlphaMask: v = mask_of(c, 3, c->alpha); break;
    case kSwapMethod: v = GLX_SWAP_UNDEFINED_OML; break;
    case kMaxSwapInterval: v = 1000; break;
    case kBindToTextureRgb: v = 1; break;
    case kBindToTextureRgba: v = c->alpha ? 1 : 0; break;
    case kBindToTextureTargets: v = 0x7; break; /* 1D, 2D, rectangle */
    case kYInverted: v = 1; break;
    case kRedShift: v = shift_of(c, 0); break;
    case kGreenShift: v = shift_of(c, 1); break;
    case kBlueShift: v = shift_of(c, 2); break;
    case kAlphaShift: v = c->alpha ? shift_of(c, 3) : 0; break;
    default:
        if (index >= kTransparentRed && index <= kTransparentAlpha) v = GLX_DONT_CARE;
        break;
    }
    *attrib = (unsigned)index;
    *value = v;
    return 1;
}

static int get_config_attrib(const DriConfig* c, unsigned attrib, unsigned* value) {
    unsigned a;
    return index_config_attrib(c, (int)attrib, &a, value);
}

/* The screen is the NULL-terminated config list the server reads (and frees entries of). */
static DriScreen* create_screen(const DriConfig*** configs) {
    const DriConfig** list = calloc(CONFIG_COUNT + 1, sizeof *list);
    if (!list) return NULL;
    for (size_t i = 0; i < CONFIG_COUNT; ++i) {
        DriConfig* copy = malloc(sizeof *copy); /* the server frees each config */
        if (!copy) return NULL;
        memcpy(copy, &kConfigs[i], sizeof *copy);
        list[i] = copy;
    }
    *configs = list;
    return (DriScreen*)list;
}

static DriScreen* swrast_create_screen(int screen, const DriExtension** loader, const DriConfig*** configs,
                                       void* priv) {
    (void)screen, (void)loader, (void)priv;
    return create_screen(configs);
}

static DriScreen* core_create_screen(int screen, int fd, unsigned sarea, const DriExtension** loader,
                                     const DriConfig*** configs, void* priv) {
    (void)screen, (void)fd, (void)sarea, (void)loader, (void)priv;
    return create_screen(configs);
}

static void destroy_screen(DriScreen* s) { (void)s; /* the server frees the configs and the list */ }

static const DriExtension** get_extensions(DriScreen* s) {
    static const DriExtension* none[] = {NULL};
    (void)s;
    return none;
}

static DriDrawable* swrast_create_drawable(DriScreen* s, const DriConfig* c, void* priv) {
    (void)s, (void)c, (void)priv;
    return (DriDrawable*)1; /* never rendered to: no contexts */
}

static void destroy_drawable(DriDrawable* d) { (void)d; }

/* Indirect rendering: refused. */
static DriContext* create_context(DriScreen* s, const DriConfig* c, DriContext* shared, void* priv) {
    (void)s, (void)c, (void)shared, (void)priv;
    return NULL;
}

static DriContext* create_context_for_api(DriScreen* s, int api, const DriConfig* c, DriContext* shared, void* priv) {
    (void)api;
    return create_context(s, c, shared, priv);
}

static DriContext* create_context_attribs(DriScreen* s, int api, const DriConfig* c, DriContext* shared, unsigned n,
                                          const unsigned* attribs, unsigned* error, void* priv) {
    (void)n, (void)attribs;
    *error = 1; /* __DRI_CTX_ERROR_NO_MEMORY */
    return create_context_for_api(s, api, c, shared, priv);
}

static const DriCoreExtension kCore = {
    {"DRI_Core", 1},
    core_create_screen,
    destroy_screen,
    get_extensions,
    get_config_attrib,
    index_config_attrib,
    NULL,
    destroy_drawable,
    NULL,
    create_context,
    NULL,
    NULL,
    NULL,
    NULL,
};

static const DriSwrastExtension kSwrast = {
    {"DRI_SWRast", 3}, swrast_create_screen, swrast_create_drawable, create_context_for_api, create_context_attribs,
};

static const DriExtension* kExtensions[] = {&kCore.base, &kSwrast.base, NULL};

const DriExtension** __driDriverGetExtensions_swrast(void) { return kExtensions; }
