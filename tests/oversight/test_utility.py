from controllers.oversight.utility import (
    CONTINUE,
    DEFAULT_COSTS,
    QUIT,
    Costs,
    branch_utility,
    cost_grid,
    expected_utility,
)


def test_utility_follows_the_spec_defaults():
    assert DEFAULT_COSTS == Costs(fail_penalty=1.0, intervene=0.05, step=0.01, continue_=0.0)
    assert branch_utility(CONTINUE, True, 10) == 1 - 0.10
    assert branch_utility(CONTINUE, False, 10) == -1 - 0.10
    assert abs(branch_utility("expert", True, 5) - (1 - 0.05 - 0.05)) < 1e-12
    assert abs(branch_utility("reflect", False, 0) - (-1 - 0.05)) < 1e-12
    assert branch_utility(QUIT, False, 30) == 0.0


def test_costs_are_parameters():
    costs = Costs(fail_penalty=4.0, intervene=0.4, step=0.0)
    assert branch_utility("expert", False, 7, costs) == -4.4
    assert expected_utility("expert", 0.5, 0, costs) == 0.5 - 2.0 - 0.4


def test_grid_is_five_by_five_and_distinct():
    grid = cost_grid()
    assert len(grid) == 25
    assert len({(c.intervene, c.fail_penalty) for c in grid}) == 25
