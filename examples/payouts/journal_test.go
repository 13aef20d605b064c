package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A line cut short by a crash is dropped, and the next record starts on a
// line of its own; a broken line before the end is refused.
func TestJournalDropsATornLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	complete := `{"payout_id":"a","event":"initiated","quote_id":"q1"}` + "\n" + `{"payout_id":"a","event":"done"}` + "\n"
	require.NoError(t, os.WriteFile(path, []byte(complete+`{"payout_id":"b","ev`), 0o600))

	j, state, err := openJournal(path)
	require.NoError(t, err)
	assert.Equal(t, eventDone, state["a"].Event, "the last record of a payout is its state")
	assert.NotContains(t, state, "b")
	require.NoError(t, j.append(record{PayoutID: "b", Event: eventUnknown, Step: "initiate", IdempotencyKey: "k"}))
	require.NoError(t, j.close())

	_, state, err = openJournal(path)
	require.NoError(t, err)
	assert.Equal(t, eventUnknown, state["b"].Event)
	assert.Equal(t, "k", state["b"].IdempotencyKey)

	require.NoError(t, os.WriteFile(path, []byte("not json\n"+complete), 0o600))
	_, _, err = openJournal(path)
	assert.ErrorContains(t, err, "line 1 is not a record")
}

func TestReadRowsRefusesADuplicatePayoutID(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.csv")
	require.NoError(t, os.WriteFile(path, []byte("recipient_id,amount,currency,payout_id\nr,1.00,NGN,p-1\nr,x,NGN,p-1\n"), 0o600))
	_, err := readRows(path)
	assert.ErrorContains(t, err, `line 3: payout id "p-1" is on line 2 too`)
	assert.ErrorContains(t, err, "line 3: the amount is not a number")
}
