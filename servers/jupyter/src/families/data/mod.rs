//! Families of data analysis: group-bys, joins, pivots, time series, outliers and regressions
//! over generated CSV, JSON, Excel, Parquet and SQLite files.

mod budget_variance;
mod clinic_visits;
mod clock;
mod draw;
mod fleet_fuel;
mod group_revenue;
mod inventory_report;
mod join_orders;
mod json_records;
mod linear_regression;
mod missing_values;
mod outliers;
mod parquet_filter;
mod payroll_overtime;
mod pivot_excel;
mod revenue_chart;
mod sensor_exceedance;
mod shipping_delays;
mod stats;
mod store_margin;
mod strongest_correlation;
mod survey_waves;
mod time_series;
mod top_customer;
mod web_sessions;

use super::Family;

/// This module's families.
pub(super) static FAMILIES: &[Family] = &[
    group_revenue::FAMILY,
    join_orders::FAMILY,
    pivot_excel::FAMILY,
    parquet_filter::FAMILY,
    json_records::FAMILY,
    time_series::FAMILY,
    outliers::FAMILY,
    linear_regression::FAMILY,
    strongest_correlation::FAMILY,
    missing_values::FAMILY,
    top_customer::FAMILY,
    store_margin::FAMILY,
    payroll_overtime::FAMILY,
    sensor_exceedance::FAMILY,
    inventory_report::FAMILY,
    revenue_chart::FAMILY,
    clinic_visits::FAMILY,
    fleet_fuel::FAMILY,
    survey_waves::FAMILY,
    shipping_delays::FAMILY,
    budget_variance::FAMILY,
    web_sessions::FAMILY,
];
