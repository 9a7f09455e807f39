package training

// A run measures with the registered measures: the built-in ones register, in their report
// order, when package builtin is imported, here, below every command, comparison and test that
// runs or reports a run.
import _ "extrapolate/experiments/measure/builtin"
