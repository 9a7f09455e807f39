// Package plugins is the one place where schemes, RoPE scalings, temperatures, distance maps,
// tasks and measures from outside the project's own packages are brought in. Every command
// (cmd/train, cmd/eval, cmd/sample, cmd/inspect, cmd/export, cmd/import, cmd/bench) imports it for its side
// effects, so a package imported here is registered in all seven, and a checkpoint trained with
// its scheme can be evaluated, sampled, inspected, exported, imported back and timed as a
// built-in one.
//
// A package of yours registers what it adds from its init function, as image/png registers PNG
// with package image (position.Register, position.RegisterScaling, task.Register,
// measure.Register). Add one line for it to the import block below:
//
//	import (
//		_ "extrapolate/logdist" // your scheme, in the folder logdist/
//	)
//
// The built-in schemes, tasks and measures need no line here: their packages register them.
// The block is empty in the repository, so that the committed results are the built-in ones.
package plugins

import (
// Your packages, one line each: _ "extrapolate/yourpackage"
)
