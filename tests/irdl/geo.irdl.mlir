// geo: a small hand-written dialect for mlirtext's IRDL tests (tests/test_irdl.py), using every
// kind of constraint: irdl.is, irdl.any, irdl.any_of, irdl.all_of, irdl.base (by reference and
// by name), irdl.parametric, variadic operands, attributes and regions.
irdl.dialect @geo {
  // A point in the plane, its coordinates of one float type.
  irdl.type @point {
    %f32 = irdl.is f32
    %f64 = irdl.is f64
    %elem = irdl.any_of(%f32, %f64)
    irdl.parameters(elem: %elem)
  }

  // A unit of length.
  irdl.attribute @unit {
    %m = irdl.is "m"
    %ft = irdl.is "ft"
    %name = irdl.any_of(%m, %ft)
    irdl.parameters(name: %name)
  }

  // The distance between two points of the same type, in a unit.
  irdl.operation @distance {
    %elem = irdl.any
    %p = irdl.parametric @geo::@point<%elem>
    %unit = irdl.base @geo::@unit
    irdl.operands(lhs: %p, rhs: %p)
    irdl.results(d: %elem)
    irdl.attributes {"unit" = %unit}
  }

  // The centroid of any number of points of one type.
  irdl.operation @centroid {
    %elem = irdl.any
    %p = irdl.parametric @geo::@point<%elem>
    irdl.operands(points: variadic %p)
    irdl.results(c: %p)
  }

  // How many points there are: an integer or an index, with a tag.
  irdl.operation @count {
    %int = irdl.base "!builtin.integer"
    %index = irdl.is index
    %n = irdl.any_of(%int, %index)
    %tag = irdl.base "#builtin.string"
    irdl.results(n: %n)
    irdl.attributes {"tag" = %tag}
  }

  // A 32-bit integer flag.
  irdl.operation @flag {
    %int = irdl.base "!builtin.integer"
    %i32 = irdl.is i32
    %f = irdl.all_of(%int, %i32)
    irdl.results(f: %f)
  }

  // Applies its one-block body to a point.
  irdl.operation @for_each {
    %elem = irdl.any
    %p = irdl.parametric @geo::@point<%elem>
    %body = irdl.region(%p) with size 1
    irdl.operands(point: %p)
    irdl.regions(body: %body)
  }
}
