package mcpclient

// PluginName is the name that selects this plugin in a composition file
// entry (`name: mcp-client`).
const PluginName = "mcp-client"
