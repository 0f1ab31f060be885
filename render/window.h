// The desktop window: GLFW with an OpenGL 3.3 core context loaded through GLEW, and the Dear
// ImGui context with its GLFW + OpenGL 3 backends bound to it. CORRTRACK_GL_API picks how the
// context is made: unset, GLX (X11's default); egl, EGL on the same window; egl-device, an EGL
// device pbuffer beside a window without a context (egl_offscreen.h).
// Thread rules: main thread only (GLFW and GL demand it); one Window per process.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "corrtrack/image.h"
#include "render/egl_offscreen.h"

struct GLFWwindow;

namespace corrtrack {

struct WindowOptions {
    std::string title = "corrtrack";
    int width = 1280, height = 720;
    bool vsync = false;  // off: the tracker, not the monitor, sets the pace
    float font_px = 16;  // DejaVu Sans at this size when installed, else ImGui's own font scaled
};

// Raw key presses for the app's shortcuts (GLFW key codes and modifier bits), delivered from
// glfwPollEvents / glfwWaitEvents* on the main thread, before ImGui sees them.
using KeyHandler = std::function<void(int key, int mods)>;

class Window {
public:
    Window() = default;
    ~Window();
    Window(const Window&) = delete;
    Window& operator=(const Window&) = delete;

    // Creates the window, the GL context, GLEW and ImGui. False + *error (no display, no GL 3.3).
    bool open(const WindowOptions& options, std::string* error);
    GLFWwindow* handle() const { return window_; }

    void set_vsync(bool on);
    bool vsync() const { return vsync_; }
    bool should_close() const;
    void set_key_handler(KeyHandler handler) { key_handler_ = std::move(handler); }
    // True when any input or window event arrived since the last call (what needs a redraw).
    bool take_input_seen();

    void poll_events();
    void wait_events(double timeout_s);
    void begin_frame();  // ImGui NewFrame for both backends
    void render();       // ImGui Render + clear + draw into the back buffer
    void swap();
    Size framebuffer_size() const;
    std::string gl_renderer() const;  // "llvmpipe (LLVM 15.0.6, 256 bits)" etc.
    std::string gl_vendor() const;    // "Mesa", "NVIDIA Corporation"
    std::string gl_version() const;   // "4.5 (Core Profile) Mesa 22.3.6" etc.

private:
    static void on_key(GLFWwindow* w, int key, int scancode, int action, int mods);
    static void on_any_input(GLFWwindow* w);

    GLFWwindow* window_ = nullptr;
    // CORRTRACK_GL_API=egl-device: the context and the drawing on an EGL device pbuffer.
    std::unique_ptr<EglOffscreen> offscreen_;
    Size offscreen_size_;
    bool glfw_ready_ = false, imgui_ready_ = false;
    bool vsync_ = false;
    bool input_seen_ = true;
    KeyHandler key_handler_;
};

}  // namespace corrtrack
