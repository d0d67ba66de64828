// The two variants of the combo system (see docs/systems/combo.md).
#pragma once

namespace fl::combo {

enum class Variant : unsigned char {
  kSpec,      // the seed's code as written, defects included
  kHardened,  // the smallest changes making COMBO-1..16 hold; each change names its invariant
};

inline const char* variant_name(Variant v) { return v == Variant::kSpec ? "spec" : "hardened"; }

}  // namespace fl::combo
