"""The tenant key derivation the authorizer and the consumer share."""

from controlplane.dal import tenant_keys


def test_the_key_value_is_a_valid_api_gateway_key_and_stable():
    value = tenant_keys.tenant_key("acme")

    assert 20 <= len(value) <= 128 and value.isalnum()
    assert value == tenant_keys.tenant_key("acme")
    assert tenant_keys.usage_identifier_key("acme", operator=False) == value
    assert tenant_keys.usage_identifier_key(None, operator=True) == tenant_keys.operators_key()
    assert tenant_keys.usage_identifier_key(None, operator=False) is None
