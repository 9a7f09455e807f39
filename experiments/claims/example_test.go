package claims_test

import (
	"fmt"

	"extrapolate/experiments/claims"
	"extrapolate/experiments/measure"
)

// A claim of your own, registered from your package's init function: here, that every run of
// the comparison finished.
func ExampleRegister() {
	claims.Register(claims.Claim{
		ID:        "every_run_ok",
		Statement: "Every run of the comparison trains and evaluates to the end",
		Rule:      "no run's status is failed.",
		Check: func(rep *measure.Report) (claims.Verdict, string) {
			for _, r := range rep.Runs {
				if !r.Result.OK() {
					return claims.NotReproduced, fmt.Sprintf("%s failed.", r.Label)
				}
			}
			return claims.Reproduced, fmt.Sprintf("All %d runs finished.", len(rep.Runs))
		},
	})
	fmt.Println(claims.Known("every_run_ok"))
	// Output: true
}
