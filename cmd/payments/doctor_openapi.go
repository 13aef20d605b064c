package main

import (
	"errors"
	"net/http"

	"github.com/paymentsapi/payments-go/openapi"
)

// documentContract checks each answer and delivery with doctor's own
// checks first, whose findings say most plainly what differs ("members the
// SDK does not know: fee_amount, total"), then against the OpenAPI document
// of the assumptions (module openapi, the document the fake is held to),
// which catches what they do not look for. A violation of the document is
// filed under the row its x-assumption names; one of the published
// specification (no row) is not doctor's to report.
type documentContract struct {
	doc *openapi.Contract
	own assumedContract
}

// newDocumentContract loads the embedded document (openapi's
// TestDocumentLoads proves it loads), or keeps to doctor's own checks if it
// somehow cannot.
func newDocumentContract() contract {
	doc, err := openapi.Load()
	if err != nil {
		return assumedContract{}
	}
	return documentContract{doc: doc}
}

func (c documentContract) CheckResponse(req *http.Request, status int, header http.Header, body []byte) error {
	if err := c.own.CheckResponse(req, status, header, body); err != nil {
		return err
	}
	return fromViolation(c.doc.CheckResponse(req, status, header, body))
}

func (c documentContract) CheckWebhook(header http.Header, body []byte) error {
	if err := c.own.CheckWebhook(header, body); err != nil {
		return err
	}
	return fromViolation(c.doc.CheckWebhook(header, body))
}

// fromViolation files the document's first violation under its row; nil
// when there is none or it names no row.
func fromViolation(err error) error {
	var v *openapi.Violation
	if err == nil || !errors.As(err, &v) || v.Assumption == "" {
		return nil
	}
	return differ(v.Assumption, "%s: %s (openapi/payments-api.yaml)", v.Where, v.Detail)
}
