"""pyproject's `integration` marker is on every integration test and on no unit test, so
`-m "not integration"` selects what it says."""


def test_every_integration_test_is_marked(request):
    items = request.session.items
    here = [item for item in items if "integration" in item.path.parts]
    assert here and all(item.get_closest_marker("integration") for item in here)
    assert not any(item.get_closest_marker("integration") for item in items if "unit" in item.path.parts)
