package outcome

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/paymentsapi/payments-go"
	"github.com/paymentsapi/payments-go/internal/eventkind"
	"github.com/paymentsapi/payments-go/internal/textrule"
)

// Kind says what an outcome is about.
type Kind string

// The kinds of outcome the tracker follows.
const (
	KindPayment   Kind = "payment"
	KindRecipient Kind = "recipient"
)

// State is where a payment or a recipient stands. Only the states below
// exist: an event kind this package does not know never sets a state, so a
// state the specification does not list stays unknown, never guessed final.
type State string

// The states, by kind. Pending and Unverified are open; the others are final.
const (
	// StateUnknown: nothing tracked yet.
	StateUnknown State = ""

	StatePending   State = "pending"   // payment.initiated, or confirmed without an outcome
	StateCompleted State = "completed" // payment.completed
	StateFailed    State = "failed"    // payment.failed
	StateRejected  State = "rejected"  // payment.rejected

	StateUnverified         State = "unverified"          // recipient.created
	StateVerified           State = "verified"            // recipient.verified
	StateVerificationFailed State = "verification_failed" // recipient.verification_failed
)

// Final reports whether s is an end state: once there, an outcome never
// moves again.
func (s State) Final() bool {
	switch s {
	case StateCompleted, StateFailed, StateRejected, StateVerified, StateVerificationFailed:
		return true
	}
	return false
}

// Effect is what one event did to an outcome.
type Effect string

// The effects of an event, as Decide reports them and Step records them.
const (
	// EffectForward: the event moved the state forward (or started it).
	EffectForward Effect = "forward"
	// EffectBackward: the event would have moved a final state back to an
	// open one (a late payment.initiated after payment.completed, say). It
	// is recorded and ignored.
	EffectBackward Effect = "backward"
	// EffectConflict: a second, different final state (payment.failed after
	// payment.completed). It is recorded, the first final state stays, and
	// Outcome.Conflict names both events.
	EffectConflict Effect = "conflict"
	// EffectFlags: an event of the current state whose is_completed or
	// is_reversed differs from the last one recorded: the flags are kept as
	// this one sends them (a reversal after completion shows here).
	EffectFlags Effect = "flags"
	// EffectNone: nothing to record: a duplicate (an event id already
	// recorded), an event that repeats the current state and flags, or a
	// kind the tracker does not follow. Nothing is written.
	EffectNone Effect = "none"
	// EffectUntrackable: an event of a tracked kind that cannot be
	// recorded: its data has no id, or a reference, status or flag the
	// tracker cannot read (Decide's ErrInvalidEvent says which), or its
	// store cannot hold it. Tracker.Apply and pgstore's ApplyTx report it
	// with a nil error and log it at warning level: nothing is written,
	// and the merchant's function and its job go on (Wrap calls the
	// function; a Queue completes the job). Only Apply and ApplyTx report
	// it; Decide returns the error.
	EffectUntrackable Effect = "untrackable"
)

// Step is one event recorded in an outcome.
type Step struct {
	// EventID and EventType are the event's.
	EventID   string             `json:"event_id"`
	EventType payments.EventType `json:"event_type"`
	// State is the state the event reports.
	State State `json:"state"`
	// Effect is what the event did.
	Effect Effect `json:"effect"`
	// Status, IsCompleted and IsReversed are the data's members as the
	// service sent them (payments only).
	Status      string `json:"status,omitempty"`
	IsCompleted bool   `json:"is_completed,omitempty"`
	IsReversed  bool   `json:"is_reversed,omitempty"`
	// EventCreatedAt is the event's created_at; RecordedAt when the tracker
	// recorded it (the clock of the process that did).
	EventCreatedAt time.Time `json:"event_created_at"`
	RecordedAt     time.Time `json:"recorded_at"`
}

// Outcome is the tracked record of one payment or recipient.
type Outcome struct {
	Kind Kind `json:"kind"`
	// ID is the payment's or the recipient's id.
	ID string `json:"id"`
	// Reference is the payment's reference ("" for a recipient, or when no
	// event carried one yet).
	Reference string `json:"reference,omitempty"`
	// State is the current state; Decided is the step that set it.
	State State `json:"state"`
	// IsCompleted and IsReversed are the payment's flags as the service last
	// sent them in an event of the current state.
	IsCompleted bool `json:"is_completed,omitempty"`
	IsReversed  bool `json:"is_reversed,omitempty"`
	// ConfirmedAt is when Tracker.Confirmed recorded the payment's
	// confirmation; zero when it was not called.
	ConfirmedAt time.Time `json:"confirmed_at,omitzero"`
	// FirstSeen is when the tracker first recorded anything of it.
	FirstSeen time.Time `json:"first_seen"`
	// Steps are the recorded events, in the order they were recorded, at
	// most MaxSteps of them (see MaxSteps for which are kept past that).
	Steps []Step `json:"steps,omitempty"`
	// DroppedSteps counts the steps recorded and later dropped to keep
	// Steps within MaxSteps.
	DroppedSteps int `json:"dropped_steps,omitempty"`
	// Conflict, when set, is the first final event that disagreed with the
	// final state.
	Conflict *ConflictError `json:"conflict,omitempty"`
}

// Decided returns the step that set the current state, or false when no
// event set it (a payment known only from Tracker.Confirmed).
func (o *Outcome) Decided() (Step, bool) {
	for i := len(o.Steps) - 1; i >= 0; i-- {
		if s := o.Steps[i]; s.Effect == EffectForward && s.State == o.State {
			return s, true
		}
	}
	return Step{}, false
}

// MaxSteps bounds the steps an Outcome keeps, so that a payment with any
// number of events stays one small record that every store can read and
// write. Past the bound, Decide drops the oldest step that is neither a
// step that moved the state forward (at most two: the open state and the
// final one, so Decided always finds its step) nor the step of the first
// conflicting final event (the one Conflict names); Outcome.DroppedSteps
// counts what was dropped. So a record keeps its deciding steps, its first
// conflict and the latest other steps, up to MaxSteps in all.
//
// A step is only made by an event that changes the record: a first or
// forward state (EffectForward), a late open event after a final one
// (EffectBackward), a second, different final event (EffectConflict), or
// the current state with other flags or a new reference (EffectFlags).
// Duplicates, repeats of the state and flags, and kinds the tracker does
// not follow make no step.
//
// Decide recognises a duplicate by the event ids of the steps kept. A
// duplicate of a dropped step is decided as a late copy of that event: it
// can never change the state or Conflict (the state only moves forward,
// the deciding steps and the first conflict are never dropped), but it may
// be recorded again as a step (one write), and an EffectFlags one sets the
// flags it carries, as any late delivery does. Once-only processing is the
// webhook handler's (its store claims each event id) and the pgstore
// Queue's (one job per event id), not the tracker's. Tests:
// TestDecideBoundedHistory, and each store's conformance test
// (BoundedHistory).
const MaxSteps = 32

// trim drops the oldest steps that Decided and Conflict do not need until
// at most MaxSteps remain, and counts them in DroppedSteps. It never
// drops a kept step: a record of only such steps (never more than three)
// stays as it is.
func (o *Outcome) trim() {
	excess := len(o.Steps) - MaxSteps
	if excess <= 0 {
		return
	}
	kept := o.Steps[:0] // Decide's own copy: filtered in place
	for _, s := range o.Steps {
		if excess > 0 && !o.pinned(s) {
			excess--
			o.DroppedSteps++
			continue
		}
		kept = append(kept, s)
	}
	clear(o.Steps[len(kept):])
	o.Steps = kept
}

// pinned reports whether trim keeps s whatever its age.
func (o *Outcome) pinned(s Step) bool {
	if s.Effect == EffectForward {
		return true
	}
	return s.Effect == EffectConflict && o.Conflict != nil && s.EventID == o.Conflict.SecondEvent
}

func (o *Outcome) has(eventID string) bool {
	for _, s := range o.Steps {
		if s.EventID == eventID {
			return true
		}
	}
	return false
}

// ConflictError reports two final events that disagree: the first decided
// the outcome, the second was recorded and ignored.
type ConflictError struct {
	Kind        Kind   `json:"kind"`
	ID          string `json:"id"`
	FirstEvent  string `json:"first_event"`
	FirstState  State  `json:"first_state"`
	SecondEvent string `json:"second_event"`
	SecondState State  `json:"second_state"`
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("outcome: %s %s: conflicting final events: %s said %s, then %s said %s (the first stands)",
		e.Kind, e.ID, e.FirstEvent, e.FirstState, e.SecondEvent, e.SecondState)
}

// ErrInvalidEvent matches the error of an event of a tracked kind that
// cannot be applied: its data is missing, has no id, or has a reference,
// status (or flag) that is not the type the specification gives, or a
// reference the SDK would refuse to send (see Subject). Nothing is
// recorded. Decide and SubjectOf return it; Tracker.Apply reports such an
// event as EffectUntrackable instead, so that it never fails a delivery.
// Confirmed and Await return it for arguments they cannot use.
var ErrInvalidEvent = errors.New("outcome: event cannot be tracked")

// eventState maps the tracked event kinds to a kind and state.
var eventState = map[payments.EventType]struct {
	kind  Kind
	state State
}{
	payments.EventPaymentInitiated:            {KindPayment, StatePending},
	payments.EventPaymentCompleted:            {KindPayment, StateCompleted},
	payments.EventPaymentFailed:               {KindPayment, StateFailed},
	payments.EventPaymentRejected:             {KindPayment, StateRejected},
	payments.EventRecipientCreated:            {KindRecipient, StateUnverified},
	payments.EventRecipientVerified:           {KindRecipient, StateVerified},
	payments.EventRecipientVerificationFailed: {KindRecipient, StateVerificationFailed},
}

// Tracked reports whether events of kind t change an outcome.
func Tracked(t payments.EventType) bool { _, ok := eventState[t]; return ok }

// TrackedTypes lists the event kinds that change an outcome.
func TrackedTypes() []payments.EventType {
	var ts []payments.EventType
	for _, t := range eventkind.All() {
		if Tracked(t) {
			ts = append(ts, t)
		}
	}
	return ts
}

// Subject names what an event is about: its kind, the resource's id and,
// for a payment, its reference.
//
// An id is 1 to 255 bytes of printable ASCII. A reference is any text the
// SDK accepts as one (the same rule, in one place): valid UTF-8 without
// control characters, at most 255 characters (not bytes), in any script:
// "Zahlung-Müller-42", "Café-Crème-7", "Ọmọ-Ọba-9", "付款-北京-42". It is
// recorded and looked up exactly as the service sends it (no Unicode
// normalisation: a precomposed "Ọ" and an "O" with a combining dot are two
// references). Tests: TestDecideReferencesTheSDKAccepts, and each store's
// conformance test (References).
type Subject struct {
	Kind      Kind
	ID        string
	Reference string
}

// maxIDLen bounds the ids the tracker records, in bytes of printable
// ASCII. References have the SDK's rule (internal/textrule).
const maxIDLen = 255

// subjectData is the part of an event's data the tracker reads.
type subjectData struct {
	ID          json.RawMessage `json:"id"`
	Reference   json.RawMessage `json:"reference"`
	Status      json.RawMessage `json:"status"`
	IsCompleted json.RawMessage `json:"is_completed"`
	IsReversed  json.RawMessage `json:"is_reversed"`
}

// parse reads the step an event of a tracked kind makes, or fails with an
// error matching ErrInvalidEvent that never quotes the data.
func parse(ev *payments.Event) (Subject, Step, error) {
	ks := eventState[ev.Type]
	bad := func(why string) error {
		return fmt.Errorf("%w: event %s (%s): %s", ErrInvalidEvent, ev.ID, ev.Type, why)
	}
	var d subjectData
	if len(ev.Data) == 0 || json.Unmarshal(ev.Data, &d) != nil {
		return Subject{}, Step{}, bad("its data is not a JSON object")
	}
	sub := Subject{Kind: ks.kind}
	var ok bool
	if sub.ID, ok = str(d.ID); !ok || sub.ID == "" {
		return Subject{}, Step{}, bad(fmt.Sprintf("its data has no %s id (a string of 1 to %d printable characters)", ks.kind, maxIDLen))
	}
	if ks.kind == KindPayment {
		var problem string
		if sub.Reference, problem = reference(d.Reference); problem != "" {
			return Subject{}, Step{}, bad("its reference " + problem)
		}
	}
	st := Step{EventID: ev.ID, EventType: ev.Type, State: ks.state, EventCreatedAt: ev.CreatedAt}
	if st.Status, ok = str(d.Status); !ok {
		return Subject{}, Step{}, bad("its status is malformed (not a string of printable characters)")
	}
	if st.IsCompleted, ok = flag(d.IsCompleted); !ok {
		return Subject{}, Step{}, bad("its is_completed is not a boolean")
	}
	if st.IsReversed, ok = flag(d.IsReversed); !ok {
		return Subject{}, Step{}, bad("its is_reversed is not a boolean")
	}
	return sub, st, nil
}

// str reads an optional JSON string of printable ASCII, at most maxIDLen
// bytes; null or absent is "".
func str(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil || (s != "" && !printable(s)) {
		return "", false
	}
	return s, true
}

// reference reads an optional JSON string that the SDK accepts as a
// reference (internal/textrule); null or absent is "". problem says what
// is wrong, never quoting it.
func reference(raw json.RawMessage) (ref, problem string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", ""
	}
	// Decoding turns bytes that are not UTF-8 into U+FFFD: the rule sees
	// text, and the store is never handed anything else.
	if json.Unmarshal(raw, &ref) != nil {
		return "", "is not a string"
	}
	if problem = textrule.Reference(ref); problem != "" {
		return "", problem
	}
	return ref, ""
}

// printable reports whether s is 1 to maxIDLen bytes of printable ASCII.
func printable(s string) bool {
	if s == "" || len(s) > maxIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// flag reads an optional JSON boolean; null or absent is false.
func flag(raw json.RawMessage) (bool, bool) {
	raw = bytes.TrimSpace(raw)
	switch string(raw) {
	case "", "null", "false":
		return false, true
	case "true":
		return true, true
	}
	return false, false
}

// SubjectOf returns what an event of a tracked kind is about. ok is false,
// with a nil error, for a kind the tracker does not follow; err matches
// ErrInvalidEvent for tracked data it cannot read.
func SubjectOf(ev *payments.Event) (s Subject, ok bool, err error) {
	if ev == nil || !Tracked(ev.Type) {
		return Subject{}, false, nil
	}
	s, _, err = parse(ev)
	return s, err == nil, err
}

// Decide applies ev to cur, the outcome recorded so far (the zero Outcome
// when there is none), and returns the outcome to record and the event's
// effect. It is a pure function: the forward-only rules in one place, used
// by every store.
//
//   - A kind the tracker does not follow: EffectNone, cur unchanged.
//   - An event id already recorded (a duplicate): EffectNone.
//   - No state yet, or an open state and a final one: EffectForward.
//   - A final state and an open event: EffectBackward, recorded, ignored.
//   - A final state and another final one: EffectConflict, recorded; the
//     first stands and next.Conflict names both events.
//   - The current state again: EffectFlags when the flags differ (they are
//     kept as sent), else EffectNone.
//
// The record keeps at most MaxSteps steps (see MaxSteps for which, and
// for what a duplicate of a dropped step does).
//
// An event whose data cannot be read fails with an error matching
// ErrInvalidEvent, and cur is returned unchanged. now is the time recorded.
// An event about another resource than cur (another id) is an error too.
// Tests: TestDecideForwardOnly, TestDecideConflictNamesBothEvents,
// TestDecideKeepsFlagsAsSent, TestDecideUnknownKindsPassThrough,
// TestDecideBadInputMarksNothing; with real deliveries to two replicas on
// each store, TestMemoryStoreReplicas and the stores' TestOutcomeStoreReplicas.
func Decide(cur Outcome, ev *payments.Event, now time.Time) (Outcome, Effect, error) {
	if ev == nil || !Tracked(ev.Type) {
		return cur, EffectNone, nil
	}
	if ev.ID == "" {
		return cur, EffectNone, fmt.Errorf("%w: an event without an id (%s)", ErrInvalidEvent, ev.Type)
	}
	sub, st, err := parse(ev)
	if err != nil {
		return cur, EffectNone, err
	}
	if cur.ID != "" && (cur.ID != sub.ID || cur.Kind != sub.Kind) {
		return cur, EffectNone, fmt.Errorf("%w: event %s is about %s %s, not %s %s", ErrInvalidEvent, ev.ID, sub.Kind, sub.ID, cur.Kind, cur.ID)
	}
	if cur.has(ev.ID) {
		return cur, EffectNone, nil
	}
	next := cur
	next.Steps = make([]Step, len(cur.Steps), len(cur.Steps)+1)
	copy(next.Steps, cur.Steps)
	if next.ID == "" {
		next.Kind, next.ID, next.FirstSeen = sub.Kind, sub.ID, now
	}
	if next.Reference == "" {
		next.Reference = sub.Reference
	}
	st.RecordedAt = now
	switch {
	case cur.State == StateUnknown || (!cur.State.Final() && st.State.Final()):
		st.Effect = EffectForward
		next.State, next.IsCompleted, next.IsReversed = st.State, st.IsCompleted, st.IsReversed
	case cur.State == st.State:
		if cur.IsCompleted == st.IsCompleted && cur.IsReversed == st.IsReversed && next.Reference == cur.Reference {
			return cur, EffectNone, nil
		}
		st.Effect = EffectFlags
		next.IsCompleted, next.IsReversed = st.IsCompleted, st.IsReversed
	case cur.State.Final() && !st.State.Final():
		st.Effect = EffectBackward
	case cur.State.Final():
		st.Effect = EffectConflict
		if next.Conflict == nil {
			first, _ := cur.Decided()
			next.Conflict = &ConflictError{Kind: cur.Kind, ID: cur.ID, FirstEvent: first.EventID, FirstState: cur.State,
				SecondEvent: ev.ID, SecondState: st.State}
		}
	default: // open and open: pending again
		if next.Reference == cur.Reference {
			return cur, EffectNone, nil
		}
		st.Effect = EffectFlags
	}
	next.Steps = append(next.Steps, st)
	next.trim()
	return next, st.Effect, nil
}

// ConfirmedAt returns cur with the payment marked as confirmed at t, and
// whether that changed anything: a payment confirmed earlier keeps its
// first time. It is Tracker.Confirmed's rule, for stores that apply it
// themselves.
func ConfirmedAt(cur Outcome, p *payments.Payment, t time.Time) (Outcome, bool) {
	if !cur.ConfirmedAt.IsZero() {
		return cur, false
	}
	next := cur
	if next.ID == "" {
		next.Kind, next.ID, next.FirstSeen = KindPayment, p.ID, t
	}
	if next.Reference == "" {
		next.Reference = p.Reference
	}
	if next.State == StateUnknown {
		next.State = StatePending
	}
	next.ConfirmedAt = t
	return next, true
}
