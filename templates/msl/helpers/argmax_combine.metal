// A candidate for argmax: its value and its index.
struct value_index {
  float value;
  uint index;
};

// The better of two candidates: NaN never wins over a number; equal values go to the lower
// index; between two NaNs the lower index wins, so an all-NaN row selects its first element.
inline value_index argmax_combine(value_index a, value_index b) {
  bool take_b = isnan(a.value)
                    ? (!isnan(b.value) || b.index < a.index)
                    : (!isnan(b.value) && (b.value > a.value || (b.value == a.value && b.index < a.index)));
  return take_b ? b : a;
}
