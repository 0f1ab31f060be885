// One place that makes the GUI's 2D textures (CPU and CUDA-interop frames and heatmaps).
// Thread rules: main (GL) thread only, with the GL context current.
#pragma once

#include <GL/glew.h>

namespace corrtrack {

// A new texture name, bound to GL_TEXTURE_2D, clamped at the edges. Heatmaps use GL_NEAREST
// (one texel per map position, so the display never invents scores); video uses GL_LINEAR.
inline GLuint create_texture_2d(GLint filter) {
    GLuint texture = 0;
    glGenTextures(1, &texture);
    glBindTexture(GL_TEXTURE_2D, texture);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, filter);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, filter);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    return texture;
}

}  // namespace corrtrack
