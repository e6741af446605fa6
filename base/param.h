/*
 * Params structs begin with a uint64_t field_mask (UCX style): a field is read only when the
 * caller set its bit, and the library applies the default otherwise. One macro says it
 * everywhere (UCX: UCS_PARAM_VALUE).
 */
#ifndef INGOT_BASE_PARAM_H
#define INGOT_BASE_PARAM_H

/** @p _params->_name when @p _params is not NULL and has @p _bit set, else @p _default. */
#define INGOT_PARAM_VALUE(_params, _name, _bit, _default) \
    (((_params) != NULL && ((_params)->field_mask & (_bit))) ? (_params)->_name : (_default))

#endif
