package experiments

// The measures that live in packages of their own, registered by importing them: their order
// here is their sections' order in a report, after the built-in ones of experiments/measure.
import _ "extrapolate/experiments/measure/tasks"
