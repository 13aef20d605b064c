package pgstore

// NoNotify is a hook of the package's benchmarks: an OutcomeStore whose
// writes do not NOTIFY, to measure what the notification costs
// (BenchmarkOutcomeApply, BenchmarkOutcomeHandler).
func NoNotify() Option { return func(o *options) { o.noNotify = true } }
