import csv

norway = {
    r["customer_id"] for r in csv.DictReader(open("customers.csv")) if r["country"] == "Norway"
}
print(
    len(
        {
            r["customer_id"]
            for r in csv.DictReader(open("orders.csv"))
            if r["customer_id"] in norway and float(r["amount"]) > 100
        }
    )
)
