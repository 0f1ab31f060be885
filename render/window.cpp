#include "render/window.h"

#include <GL/glew.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <cstdlib>
#include <filesystem>

#include "imgui.h"
#include "imgui_impl_glfw.h"
#include "imgui_impl_opengl3.h"

namespace corrtrack {
namespace {

// GLFW reports errors through a callback; keep the last one so open() can say why it failed.
std::string& last_glfw_error() {
    static std::string e;
    return e;
}

void on_glfw_error(int code, const char* text) {
    last_glfw_error() = text ? text : "GLFW error " + std::to_string(code);
}

Window* self(GLFWwindow* w) { return static_cast<Window*>(glfwGetWindowUserPointer(w)); }

void setup_style(float font_px) {
    ImGuiIO& io = ImGui::GetIO();
    // Layout is fixed by the app; an imgui.ini in the working directory would only fight it.
    io.IniFilename = nullptr;
    const char* font = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";  // fonts-dejavu-core
    // Latin-1: every label is ASCII, so ImGui's own font (no DejaVu installed: the GPU host
    // showed "?" for the key help's arrows) draws them all too.
    static const ImWchar ranges[] = {0x0020, 0x00FF, 0};
    if (!std::filesystem::exists(font) || !io.Fonts->AddFontFromFileTTF(font, font_px, nullptr, ranges)) {
        ImFontConfig cfg;
        cfg.SizePixels = 13.0f;
        io.Fonts->AddFontDefault(&cfg);
        io.FontGlobalScale = font_px / 13.0f;
    }
    ImGui::StyleColorsDark();
    ImGuiStyle& s = ImGui::GetStyle();
    s.WindowRounding = 0;
    s.WindowBorderSize = 0;
    s.FrameRounding = 3;
    s.GrabRounding = 3;
    s.FramePadding = {6, 3};
    s.ItemSpacing = {8, 5};
    s.WindowPadding = {10, 8};
}

}  // namespace

Window::~Window() {
    if (imgui_ready_) {
        ImGui_ImplOpenGL3_Shutdown();
        ImGui_ImplGlfw_Shutdown();
        ImGui::DestroyContext();
    }
    if (window_) glfwDestroyWindow(window_);
    if (glfw_ready_) glfwTerminate();
}

bool Window::open(const WindowOptions& o, std::string* error) {
    glfwSetErrorCallback(on_glfw_error);
    if (!glfwInit()) {
        *error = "cannot start GLFW (is there a display? DISPLAY/WAYLAND_DISPLAY): " + last_glfw_error();
        return false;
    }
    glfw_ready_ = true;
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    // X servers whose GLX the GL vendor cannot use (scripts/gpu_gui.sh tries these after GLX).
    const char* env_api = std::getenv("CORRTRACK_GL_API");
    const std::string api = env_api ? env_api : "";
    if (api == "egl") glfwWindowHint(GLFW_CONTEXT_CREATION_API, GLFW_EGL_CONTEXT_API);
    if (api == "egl-device") glfwWindowHint(GLFW_CLIENT_API, GLFW_NO_API);
    window_ = glfwCreateWindow(o.width, o.height, o.title.c_str(), nullptr, nullptr);
    if (!window_) {
        *error = "cannot create a " + std::to_string(o.width) + "x" + std::to_string(o.height) +
                 " window with OpenGL 3.3 core: " + last_glfw_error();
        return false;
    }
    if (api == "egl-device") {
        offscreen_ = std::make_unique<EglOffscreen>();
        if (!offscreen_->open(o.width, o.height, error)) return false;
        offscreen_size_ = {o.width, o.height};
    } else {
        glfwMakeContextCurrent(window_);
    }
    glewExperimental = GL_TRUE;  // core profiles hide extension strings GLEW would otherwise test
    // glewInit loads the GL entry points, then wants a GLX display, which EGL contexts lack.
    const GLenum err = glewInit();
    if (err != GLEW_OK && !(err == GLEW_ERROR_NO_GLX_DISPLAY && api.rfind("egl", 0) == 0)) {
        *error = std::string("GLEW: ") + reinterpret_cast<const char*>(glewGetErrorString(err));
        return false;
    }
    while (glGetError() != GL_NO_ERROR) {  // glewInit's probe of core profiles leaves one behind
    }
    set_vsync(o.vsync);

    glfwSetWindowUserPointer(window_, this);
    // Installed before ImGui's backend, which chains to them.
    glfwSetKeyCallback(window_, on_key);
    glfwSetCharCallback(window_, [](GLFWwindow* w, unsigned) { on_any_input(w); });
    glfwSetMouseButtonCallback(window_, [](GLFWwindow* w, int, int, int) { on_any_input(w); });
    glfwSetCursorPosCallback(window_, [](GLFWwindow* w, double, double) { on_any_input(w); });
    glfwSetScrollCallback(window_, [](GLFWwindow* w, double, double) { on_any_input(w); });
    glfwSetWindowRefreshCallback(window_, [](GLFWwindow* w) { on_any_input(w); });
    glfwSetFramebufferSizeCallback(window_, [](GLFWwindow* w, int, int) { on_any_input(w); });

    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    setup_style(o.font_px);
    if (offscreen_)
        ImGui_ImplGlfw_InitForOther(window_, true);
    else
        ImGui_ImplGlfw_InitForOpenGL(window_, true);
    ImGui_ImplOpenGL3_Init("#version 330 core");
    imgui_ready_ = true;
    return true;
}

void Window::on_key(GLFWwindow* w, int key, int, int action, int mods) {
    Window* win = self(w);
    win->input_seen_ = true;
    if ((action == GLFW_PRESS || action == GLFW_REPEAT) && win->key_handler_) win->key_handler_(key, mods);
}

void Window::on_any_input(GLFWwindow* w) { self(w)->input_seen_ = true; }

bool Window::take_input_seen() {
    const bool seen = input_seen_;
    input_seen_ = false;
    return seen;
}

void Window::set_vsync(bool on) {
    vsync_ = on;
    if (!offscreen_) glfwSwapInterval(on ? 1 : 0);  // a pbuffer has no display to wait for
}

bool Window::should_close() const { return glfwWindowShouldClose(window_); }
void Window::poll_events() { glfwPollEvents(); }
void Window::wait_events(double timeout_s) {
    if (timeout_s > 0)
        glfwWaitEventsTimeout(timeout_s);
    else
        glfwPollEvents();
}

void Window::begin_frame() {
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
}

void Window::render() {
    ImGui::Render();
    const Size fb = framebuffer_size();
    glViewport(0, 0, fb.width, fb.height);
    glClearColor(0.08f, 0.08f, 0.09f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

void Window::swap() {
    if (offscreen_)
        offscreen_->swap();
    else
        glfwSwapBuffers(window_);
}

Size Window::framebuffer_size() const {
    if (offscreen_) return offscreen_size_;
    Size s;
    glfwGetFramebufferSize(window_, &s.width, &s.height);
    return s;
}

namespace {
std::string gl_string(GLenum name) {
    const GLubyte* r = glGetString(name);
    return r ? reinterpret_cast<const char*>(r) : "";
}
}  // namespace

std::string Window::gl_renderer() const { return gl_string(GL_RENDERER); }
std::string Window::gl_vendor() const { return gl_string(GL_VENDOR); }
std::string Window::gl_version() const { return gl_string(GL_VERSION); }

}  // namespace corrtrack
