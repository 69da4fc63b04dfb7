// The rvmdbg extension: Relay highlighting, and debug sessions of type "rvmdbg" served by
// `rvmdbg dap` (the command is the `rvmdbg.command` setting, with `dap` appended).
"use strict";
const vscode = require("vscode");

function adapterCommand() {
  const command = vscode.workspace.getConfiguration("rvmdbg").get("command");
  return Array.isArray(command) && command.length > 0 ? command : ["rvmdbg"];
}

function activate(context) {
  context.subscriptions.push(vscode.debug.registerDebugAdapterDescriptorFactory("rvmdbg", {
    createDebugAdapterDescriptor() {
      const [program, ...args] = adapterCommand();
      return new vscode.DebugAdapterExecutable(program, [...args, "dap"]);
    },
  }));
  context.subscriptions.push(vscode.debug.registerDebugConfigurationProvider("rvmdbg", {
    // F5 without a launch.json: debug the open .relay file, stopping on entry
    resolveDebugConfiguration(folder, config) {
      if (!config.type && !config.request && !config.name) {
        const editor = vscode.window.activeTextEditor;
        if (editor && editor.document.languageId === "relay") {
          Object.assign(config, { type: "rvmdbg", request: "launch",
                                  name: "Debug Relay program", program: "${file}",
                                  stopOnEntry: true });
        }
      }
      if (!config.program) {
        return vscode.window.showInformationMessage("Open a .relay file to debug it.")
          .then(() => undefined);
      }
      return config;
    },
  }));
}

function deactivate() {}

module.exports = { activate, deactivate };
