package payments

import (
	"encoding/json"
	"unicode/utf8"
)

// This file decodes the envelope of a successful answer, and the resource
// in it, in one pass over the body, without reflection: what encoding/json
// does in two passes (its validity check, then the decode) and the surprise
// scan in a third. It is a shortcut, never a second reading of JSON: it
// takes only the bodies whose every byte it understands, exactly as the
// service is assumed to answer (docs/assumptions.md), and for those it
// leaves what encoding/json would leave. Anything else (a member it does not
// know, a name in another case or escaped, a duplicate, an escaped or
// invalid UTF-8 string, a value of another type, an error from a value's own
// decoding, invalid JSON, nesting deeper than maxFastDepth) makes it give
// up before it has changed anything the caller can see, and decode runs
// encoding/json on the body as before. TestFastDecodeIsEncodingJSON holds
// it to json.Unmarshal over many random bodies; BENCHMARKS.md says what it
// bought.
//
// A body it takes has, by construction, no member that the surprise scan
// (dataSurprises) would report as unknown: that scan then has nothing to
// walk (TestFastDecodeLeavesNoUnknownMember). The JSON reader itself,
// which validates what it passes over, is in fastjson.go.

// fastTarget is a resource fastEnvelope decodes the data member into:
// member reads one member of data (see fastReader.object).
type fastTarget interface {
	member(r *fastReader, name []byte) int
}

// fastEnvelope decodes body into env and, for a data object, into target
// (nil: env.Data's own handling, a *dataView or discard, which takes the
// raw value), as json.Unmarshal(body, env) would with env.Data holding
// target. It reports false, having perhaps written into env and target,
// when it will not take the body: the caller restores both and runs
// json.Unmarshal. It never takes an answer with success false, or with
// code, errors or error members: those are error answers, read by
// encoding/json.
func fastEnvelope(body []byte, env *envelope, target fastTarget) bool {
	r := fastReader{b: body}
	if !r.object(func(r *fastReader, name []byte) int {
		switch string(name) {
		case "success":
			if r.null() {
				env.Success = nil
				return 0
			}
			if !r.boolean(&env.flag) || !env.flag {
				return -1
			}
			env.Success = &env.flag
			return 0
		case "message":
			return ok(1, r.str(&env.Message))
		case "stan":
			return ok(2, r.str(&env.Stan))
		case "data":
			return ok(3, fastData(r, env, target))
		}
		if envelopeName(name) {
			return -1 // code, errors, error, or a name in another case
		}
		return ok(noField, r.skip()) // ignored by encoding/json too
	}) {
		return false
	}
	r.space()
	return r.i == len(body) // nothing after the envelope
}

// fastData reads the envelope's data member.
func fastData(r *fastReader, env *envelope, target fastTarget) bool {
	if r.null() {
		env.Data = nil // encoding/json sets the interface to nil
		return true
	}
	if target != nil {
		return r.object(target.member)
	}
	v, read := r.raw()
	if !read {
		return false
	}
	u, isU := env.Data.(json.Unmarshaler)
	return isU && u.UnmarshalJSON(v) == nil
}

// envelopeName reports whether name may be read by encoding/json as one of
// the envelope's members: one of them in any case, or a name it folds in
// ways this file does not (any byte beyond ASCII).
func envelopeName(name []byte) bool {
	for _, c := range name {
		if c >= utf8.RuneSelf {
			return true
		}
	}
	if len(name) > len("success") {
		return false
	}
	var lower [7]byte
	for i, c := range name {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	switch string(lower[:len(name)]) {
	case "success", "message", "stan", "code", "errors", "error", "data":
		return true
	}
	return false
}

// member reads a member of a payment.
func (w *paymentWire) member(r *fastReader, name []byte) int {
	p := &w.plainPayment
	switch string(name) {
	case "id":
		return ok(0, r.str(&p.ID))
	case "reference":
		return ok(1, r.str(&p.Reference))
	case "status":
		return ok(2, r.str((*string)(&p.Status)))
	case "amount":
		return ok(3, r.unmarshal(&w.Amount))
	case "currency":
		return ok(4, r.str(&p.Currency))
	case "description":
		return ok(5, r.str(&p.Description))
	case "type":
		return ok(6, r.str(&p.Type))
	case "sub_type":
		return ok(7, r.str(&p.SubType))
	case "category":
		return ok(8, r.str(&p.Category))
	case "transaction_date":
		return ok(9, r.unmarshal(&p.TransactionDate))
	case "tags":
		return ok(10, r.str(&p.Tags))
	case "is_reversed":
		return ok(11, r.boolean(&p.IsReversed))
	case "is_completed":
		return ok(12, r.boolean(&p.IsCompleted))
	case "channel":
		return ok(13, r.str(&p.Channel))
	case "notes":
		return ok(14, r.str(&p.Notes))
	case "created_at":
		return ok(15, r.unmarshal(&p.CreatedAt))
	case "updated_at":
		return ok(16, r.unmarshal(&p.UpdatedAt))
	case "quote":
		if r.null() {
			w.Quote = nil
			return 17
		}
		if w.Quote == nil {
			w.Quote = new(quoteWire)
		}
		return ok(17, r.object(w.Quote.member))
	case "quote_id":
		return ok(18, r.str(&w.QuoteID))
	case "fee":
		return ok(19, r.unmarshal(&w.Fee))
	case "exchange_rate":
		return ok(20, r.unmarshal(&w.ExchangeRate))
	case "total_amount":
		return ok(21, r.unmarshal(&w.TotalAmount))
	case "expires_at":
		return ok(22, r.unmarshal(&w.ExpiresAt))
	case "recipient_id":
		// Not read, and not a surprise (paymentFields).
		return ok(23, r.skip())
	}
	return -1
}

// member reads a member of a payment's quote.
func (q *quoteWire) member(r *fastReader, name []byte) int {
	switch string(name) {
	case "quote_id":
		return ok(0, r.str(&q.QuoteID))
	case "amount":
		return ok(1, r.unmarshal(&q.Amount))
	case "fee":
		return ok(2, r.unmarshal(&q.Fee))
	case "exchange_rate":
		return ok(3, r.unmarshal(&q.ExchangeRate))
	case "total_amount":
		return ok(4, r.unmarshal(&q.TotalAmount))
	case "currency":
		return ok(5, r.str(&q.Currency))
	case "expires_at":
		return ok(6, r.unmarshal(&q.ExpiresAt))
	case "created_at":
		return ok(7, r.unmarshal(&q.CreatedAt))
	}
	return -1
}

// recipientWire is a Recipient that fastEnvelope decodes into.
type recipientWire Recipient

// member reads a member of a recipient.
func (w *recipientWire) member(r *fastReader, name []byte) int {
	switch string(name) {
	case "id":
		return ok(0, r.str(&w.ID))
	case "merchant_id":
		return ok(1, r.str(&w.MerchantID))
	case "account_number":
		return ok(2, r.str((*string)(&w.AccountNumber)))
	case "account_name":
		return ok(3, r.str(&w.AccountName))
	case "account_type":
		return ok(4, r.str((*string)(&w.AccountType)))
	case "is_internal_account":
		return ok(5, r.boolean(&w.IsInternalAccount))
	case "account_currency":
		return ok(6, r.str(&w.AccountCurrency))
	case "account_bank_name":
		return ok(7, r.str(&w.AccountBankName))
	case "account_bank_code":
		return ok(8, r.str(&w.AccountBankCode))
	case "account_country_code":
		return ok(9, r.str(&w.AccountCountryCode))
	case "account_country":
		return ok(10, r.str(&w.AccountCountry))
	case "identification":
		if r.null() {
			w.Identification = nil
			return 11
		}
		id := w.Identification
		if id == nil {
			id = new(Identification)
		}
		if !r.object(id.member) {
			return -1
		}
		w.Identification = id
		return 11
	case "limit":
		return ok(12, r.decimalPtr(&w.Limit))
	case "payment_details":
		if r.null() {
			w.PaymentDetails = nil
			return 13
		}
		pd := w.PaymentDetails
		if pd == nil {
			pd = new(PaymentDetails)
		}
		if !r.object(pd.member) {
			return -1
		}
		w.PaymentDetails = pd
		return 13
	case "created_at":
		return ok(14, r.unmarshal(&w.CreatedAt))
	case "updated_at":
		return ok(15, r.unmarshal(&w.UpdatedAt))
	}
	return -1
}

func (id *Identification) member(r *fastReader, name []byte) int {
	switch string(name) {
	case "identification_type":
		return ok(0, r.str((*string)(&id.Type)))
	case "identification_number":
		return ok(1, r.str((*string)(&id.Number)))
	case "identification_image":
		return ok(2, r.str((*string)(&id.Image)))
	}
	return -1
}

func (pd *PaymentDetails) member(r *fastReader, name []byte) int {
	switch string(name) {
	case "account_number":
		return ok(0, r.str((*string)(&pd.AccountNumber)))
	case "bank_code":
		return ok(1, r.str(&pd.BankCode))
	case "bank_name":
		return ok(2, r.str(&pd.BankName))
	case "routing_number":
		return ok(3, r.str(&pd.RoutingNumber))
	case "swift_code":
		return ok(4, r.str(&pd.SwiftCode))
	case "payment_rails":
		return ok(5, r.str(&pd.PaymentRails))
	}
	return -1
}

// virtualAccountWire is a VirtualAccount that fastEnvelope decodes into.
type virtualAccountWire VirtualAccount

// member reads a member of a virtual account.
func (w *virtualAccountWire) member(r *fastReader, name []byte) int {
	switch string(name) {
	case "id":
		return ok(0, r.str(&w.ID))
	case "currency":
		return ok(1, r.str(&w.Currency))
	case "account_number":
		return ok(2, r.str((*string)(&w.AccountNumber)))
	case "account_name":
		return ok(3, r.str(&w.AccountName))
	case "bank_name":
		return ok(4, r.str(&w.BankName))
	case "is_active":
		return ok(5, r.boolean(&w.IsActive))
	case "created_at":
		return ok(6, r.unmarshal(&w.CreatedAt))
	}
	return -1
}

// member reads a member of a page of events: each event is a slice of the
// body, as its dataView.UnmarshalJSON keeps it; has_more stays raw.
func (w *eventPageWire) member(r *fastReader, name []byte) int {
	switch string(name) {
	case "events":
		if r.null() {
			w.Events = nil
			return 0
		}
		if w.Events != nil {
			return -1 // encoding/json would append to them
		}
		events := make([]dataView, 0, 16)
		if !r.array(func(r *fastReader) bool {
			v, read := r.raw() // null too: encoding/json calls UnmarshalJSON
			events = append(events, v)
			return read
		}) {
			return -1
		}
		w.Events = &events
		return 0
	case "has_more":
		v, read := r.raw()
		w.HasMore = v
		return ok(1, read)
	}
	return -1
}

// fastTargetOf returns what fastEnvelope decodes out into, or false when
// out is not a resource it reads. A resource starts from out's fields as
// they are, as encoding/json's decode would, in a copy in s that
// fastCommit stores into out once the body is taken (a payment: its wire,
// as for encoding/json). Pointers that encoding/json would decode into
// where out has them set already are left to it.
func fastTargetOf(out any, fin finisher, s *decodeScratch) (fastTarget, bool) {
	switch o := out.(type) {
	case *Payment:
		w, isWire := fin.(*paymentWire)
		return w, isWire && w.Quote == nil
	case *Recipient:
		if o.Identification != nil || o.Limit != nil || o.PaymentDetails != nil {
			return nil, false
		}
		s.recipient = recipientWire(*o)
		return &s.recipient, true
	case *VirtualAccount:
		s.virtualAccount = virtualAccountWire(*o)
		return &s.virtualAccount, true
	case *eventPageWire:
		if o.Events != nil || o.HasMore != nil || o.parsed != nil || o.others != nil {
			return nil, false
		}
		return o, true // a failure empties it (fastUndo)
	case *json.RawMessage:
		return nil, *o == nil // a failure empties it (fastUndo)
	case nil:
		return nil, true
	}
	return nil, false
}

// fastCommit stores what fastEnvelope decoded into out.
func fastCommit(out any, s *decodeScratch) {
	switch o := out.(type) {
	case *Recipient:
		*o = Recipient(s.recipient)
	case *VirtualAccount:
		*o = VirtualAccount(s.virtualAccount)
	}
}

// fastUndo takes back what fastEnvelope wrote into out's wire when it did
// not take the body, so that encoding/json starts where it would have.
func fastUndo(out any, fin finisher) {
	switch o := out.(type) {
	case *Payment:
		if w, isWire := fin.(*paymentWire); isWire {
			o.wire(w)
		}
	case *eventPageWire:
		*o = eventPageWire{}
	case *json.RawMessage:
		*o = nil
	}
}
