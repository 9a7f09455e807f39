// Package pluginhint holds the clause that ends the message for a name no registry knows: a
// checkpoint or config naming a scheme, scaling, task or measure of a package that the command
// was built without, which is what a user's own package is until plugins/plugins.go imports it.
package pluginhint

// For is the clause for a kind of registered thing ("scheme", "task"), to follow the list of
// known names after a semicolon.
func For(kind string) string {
	return "a " + kind + " of your own is registered in every command by importing its package in plugins/plugins.go"
}
