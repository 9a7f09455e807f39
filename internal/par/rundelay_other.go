//go:build !linux

package par

// haveRunDelay is false: the sign of a process without its cores is a late claim (lateAfter).
const haveRunDelay = false

func sampleRunDelay() (delaySample, bool) { return delaySample{}, false }
