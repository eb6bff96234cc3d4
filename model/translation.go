package model

// TranslationMethod says how an offset translation was obtained.
type TranslationMethod string

const (
	// MethodExact: a sync sits exactly at the upstream offset.
	MethodExact TranslationMethod = "exact"
	// MethodConservative: the nearest sync below was used with MM2's +1
	// rule; up to RereadMax records may be read again, none skipped.
	MethodConservative TranslationMethod = "conservative"
	// MethodPreserved: no translation needed, the mirror keeps the
	// source's offsets (Cluster Linking).
	MethodPreserved TranslationMethod = "preserved"
	// MethodTooOld: every retained sync is newer than the offset.
	MethodTooOld TranslationMethod = "too-old"
	// MethodUnknown: no syncs at all for the partition.
	MethodUnknown TranslationMethod = "unknown"
	// MethodOutOfRange: the result would pass mm2.MaxOffset (a sync with a
	// downstream offset at the very top of the range): refused, never
	// wrapped to a negative offset.
	MethodOutOfRange TranslationMethod = "out-of-range"
)

// Translation is the result of translating one upstream offset.
type Translation struct {
	// Offset is the downstream next-to-read offset; meaningful only when
	// Translated.
	Offset int64
	Method TranslationMethod
	// Sync is the sync the result came from; set when Translated.
	Sync OffsetSync
	// RereadMax bounds how many records may be processed twice.
	RereadMax int64
}

// Translated reports whether Offset is usable.
func (t Translation) Translated() bool {
	return t.Method == MethodExact || t.Method == MethodConservative || t.Method == MethodPreserved
}

// KnownGroup is a consumer group the console knows for a flow: from MM2's
// checkpoints stored in DR, from the primary's group list, or both.
type KnownGroup struct {
	Name string
	// LastCheckpointMs is the record time of the group's newest stored
	// checkpoint (epoch ms); 0 when MM2 has checkpointed none yet.
	LastCheckpointMs int64
	// OnPrimary: the primary listed the group (false also when it could
	// not be asked: see KnownGroups' error).
	OnPrimary bool
}

// PrimaryOnly: the primary has the group but MM2 has no checkpoint for it
// yet, so its translation has to come from the primary's offsets alone.
func (g KnownGroup) PrimaryOnly() bool { return g.OnPrimary && g.LastCheckpointMs == 0 }
