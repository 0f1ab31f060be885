// `corrtrack gui`: registered by main() on the command line when the GUI is built.
// Thread rules: called from main() only.
#pragma once

#include "app/cli/commands.h"

namespace corrtrack {

void register_gui_command(CLI::App& root, CommandOutcome& outcome);

}  // namespace corrtrack
