package surprise

import (
	"strings"
	"testing"
)

// Every name of a Fields is found by its table (exactly), in any case by
// the fallback, and no other name is.
func TestFieldsHas(t *testing.T) {
	names := strings.Fields("id reference status amount currency description type sub_type category transaction_date " +
		"tags is_reversed is_completed channel notes created_at updated_at quote quote_id fee exchange_rate total_amount " +
		"expires_at recipient_id a b ab ba")
	f := NewFields(names...)
	for _, n := range names {
		if !f.Has([]byte(n)) || !f.Has([]byte(strings.ToUpper(n))) {
			t.Errorf("%q not found", n)
		}
		found := false
		for h := slotOf([]byte(n)); f.set.slots[h] != 0; h = (h + 1) % fieldSlots {
			found = found || f.set.names[f.set.slots[h]-1] == n
		}
		if !found {
			t.Errorf("%q not in the table", n)
		}
	}
	for _, n := range []string{"", "i", "ids", "statu", "quote_ids", "c", "abc"} {
		if f.Has([]byte(n)) {
			t.Errorf("%q found", n)
		}
	}
	if (Fields{}).Has([]byte("id")) {
		t.Error("the zero Fields has a name")
	}
}
