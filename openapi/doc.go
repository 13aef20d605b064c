// Package openapi holds the Payments API as payments-go assumes it: an
// OpenAPI 3.1 document (payments-api.yaml, embedded) and a validator that
// checks requests, responses and webhook deliveries against it.
//
// The published specification leaves many points open (the confirm
// operation, where the quote sits, the error body, the list-events page, the
// webhook body and its signature, ...). The document fills each one in the
// way the SDK and its fake (package paymentstest) do, and marks it with an
// x-assumption extension naming the Topic of its row in
// docs/assumptions.md. A *Violation carries that Topic, so that a tool such
// as `payments doctor` can say which assumption a service breaks:
//
//	c, err := openapi.Load()
//	if err != nil { ... }
//	if err := c.CheckResponse(req, resp.StatusCode, resp.Header, body); err != nil {
//		var v *openapi.Violation
//		if errors.As(err, &v) {
//			fmt.Println(v.Assumption, v.Where, v.Detail)
//		}
//	}
//
// Responses may carry members the document does not name: the checks allow
// them (forward compatibility), and Strict returns a Contract whose checks
// report them, and values the SDK does not know, as violations with Unknown
// set. The module's contract test holds the SDK and paymentstest to the
// strict contract (TestContractQuickstartJourney).
//
// This package is a module of its own (it needs kin-openapi, and Go 1.25),
// so that nothing of it reaches the go.mod of a program that imports only
// the SDK.
package openapi
