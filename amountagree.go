package payments

import (
	"bytes"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/paymentsapi/payments-go/internal/surprise"
)

// This file holds the checks that an answer's amounts are the ones sent,
// for the resources made or changed from a body with amounts (a recipient's
// limit, an amount a WithBodyField field sends). A service that counts in
// minor units reads a limit of 250000 back as 25000000.00: a value that
// would be silently wrong is a *MalformedResponseError instead, which names
// both amounts and keeps the answer (Response.Body). The quote's own check
// is in quote.go (PaymentInitiateParams.agrees).

// recipientAgrees is the agree of Recipients.Create and Update: the
// recipient's limit, when the answer has one, is the AmountLimit sent, and
// every amount-like field sent with WithBodyField that the answer echoes is
// the one sent. sent is the *Amount sent as amount_limit, or nil.
func recipientAgrees(sent any, fields []bodyField, out any) (string, []string) {
	r := out.(*Recipient)
	var d amountDiffs
	if limit, _ := sent.(*Amount); limit != nil && r.Limit != nil {
		d.compare("the recipient's limit (data.limit)", "amount_limit", *r.Limit, limit.Decimal)
	}
	d.fields(fields, &r.APIResource)
	return d.reason("The recipient is saved, with amounts that are not the ones you meant: do not pay it until its " +
		"limit is right (ask the provider how it counts amounts; then Update it with AmountLimit in the units the service reads)")
}

// virtualAccountAgrees is the agree of VirtualAccounts.Create: every
// amount-like field sent with WithBodyField that the answer echoes is the
// one sent (VirtualAccountCreateParams has no amount of its own).
func virtualAccountAgrees(_ any, fields []bodyField, out any) (string, []string) {
	var d amountDiffs
	d.fields(fields, &out.(*VirtualAccount).APIResource)
	return d.reason("The virtual account is open, with amounts that are not the ones you meant: do not share it " +
		"until you have asked the provider how it counts amounts")
}

// amountDiffs collects the amounts of an answer that are not the ones sent,
// and the amounts they name (which the error's masking leaves whole).
type amountDiffs struct {
	diffs []string
	keep  []string
}

// compare notes got, the answer's amount at what, when it is not sent, the
// amount sent as field; by value (250000 and 250000.00 agree).
func (d *amountDiffs) compare(what, field string, got, sent decimal.Decimal) {
	if got.Equal(sent) {
		return
	}
	d.diffs = append(d.diffs, what+" is "+got.String()+" where "+sent.String()+" was sent ("+field+")"+scaleHint(got, sent))
	d.keep = append(d.keep, got.String(), sent.String())
}

// fields compares each amount-like field sent (its name holds "amount" or
// "limit", its value a number or a numeric string) with the member of the
// same name in the resource's data, when the answer has one that is a
// number: a member it lacks, or one that is not a number, is not compared.
func (d *amountDiffs) fields(fields []bodyField, res *APIResource) {
	var data []byte
	for _, f := range fields {
		name := strings.ToLower(f.name)
		if !strings.Contains(name, "amount") && !strings.Contains(name, "limit") {
			continue
		}
		sent, ok := jsonAmount(f.raw)
		if !ok {
			continue
		}
		if data == nil {
			data = res.RawJSON()
		}
		if got, ok := jsonAmount(surprise.Member(data, f.name)); ok {
			d.compare("data."+f.name, "WithBodyField("+f.name+")", got, sent)
		}
	}
}

// reason is the error's reason ("" when every amount agrees): the
// differences, then next, what to do.
func (d *amountDiffs) reason(next string) (string, []string) {
	if len(d.diffs) == 0 {
		return "", nil
	}
	return "the answer disagrees with the amounts sent: " + strings.Join(d.diffs, "; ") + ". " + next +
		"; the answer is in the error's Response.Body", d.keep
}

// jsonAmount reads a JSON number, or a string holding one, as a decimal
// with its exact digits.
func jsonAmount(v []byte) (decimal.Decimal, bool) {
	v = bytes.TrimSpace(v)
	if s, ok := surprise.String(v); ok {
		v = []byte(strings.TrimSpace(s))
	}
	if len(v) == 0 || !(v[0] == '-' || v[0] >= '0' && v[0] <= '9') {
		return decimal.Decimal{}, false
	}
	a, err := decimal.NewFromString(string(v))
	return a, err == nil
}
